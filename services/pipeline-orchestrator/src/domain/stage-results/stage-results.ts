import type { JsonSchema, ProcessorKind, Stage } from '@pack/contracts';
import { AI_PROCESSORS_OFF_NOTE } from '../records/ai-switches';
import type { ProcessorRecord } from '../records/processor-records';
import {
  NEXT_STAGE,
  RUNNING_STATES,
  type GenerateResult,
  type PipelineRecord,
  type StageExpectation,
  type StageRecord,
  type StageState,
} from '../records/pipeline-records';
import { KIND_OF, laterProcessor } from '../records/stage-kinds';
import type { PipelineDeps } from '../stage-moves/pipeline-deps';
import type { StageMoves } from '../stage-moves/stage-moves';
import { withStages } from '../stage-moves/progress';
import { attemptOf } from '../stage-requests/stage-request';
import { genUiFallback, stageOutput, type StageOutput } from './stage-output';

/** A call answered by a model without prices: its cost is unknown, not 0 (nothing billed is not unpriced). */
function unpricedCall(result: GenerateResult): boolean {
  return result.unpriced && result.usage !== null;
}

/** A stage ended by the sweeper (timeout) or by a newer run before its request went out: its result is late. */
function endedWithoutResult(stage: StageRecord): boolean {
  return stage.error?.startsWith('timeout:') === true || stage.error?.startsWith('superseded:') === true;
}

/** A lookup started early that may go unused: its failure must not become an unhandled rejection. */
function settled<T>(promise: Promise<T>): Promise<T> {
  promise.catch(() => undefined);
  return promise;
}

/**
 * Generate results of pipeline stages (rules 1 and 6 of spec 3.1, docs/decisions/0024 and 0028):
 * the stage ends OK or FAILED, and an OK starts the next stage's active processor in the same
 * write, or ends the run.
 */
export class StageResults {
  constructor(
    private readonly deps: PipelineDeps,
    private readonly moves: StageMoves,
  ) {}

  /**
   * A generate result: only the attempt it names, while it is running, moves (dedupe). The
   * pipeline is this replica's remembered copy when it has one (the move expects its `rev`);
   * anything that copy cannot settle is decided again on a fresh read.
   */
  async result(result: GenerateResult, fresh = false): Promise<void> {
    if (!result.reply_to) return;
    const { pipeline_id, stage, service_id } = result.reply_to;
    const next = NEXT_STAGE[stage];
    // What an OK result looks up next (the next stage's processor, or at the end the optimizer),
    // read beside the pipeline when the result names its Service: one round trip less per stage.
    const wanted: ProcessorKind = next ? KIND_OF[next] : 'pack_optimizer';
    const lookups = this.deps.nextProcessors;
    const early = service_id === undefined ? undefined : settled(lookups.active(service_id, wanted));
    const remembered = fresh ? null : this.deps.store.recent(pipeline_id);
    const pipeline = remembered ?? (await this.deps.store.find(pipeline_id));
    const current = pipeline?.stages[stage];
    const running = RUNNING_STATES.includes(current?.state as StageState);
    if (remembered && (current?.request_id !== result.request_id || !running)) return this.again(result);
    if (!pipeline || !current) return;
    // An earlier attempt of the stage (replaced by a trigger or a push): the call was
    // made and billed, so its cost is the pipeline's (spec 2.2); the stage is not moved.
    if (current.request_id !== result.request_id) return this.replaced(pipeline, stage, current, result);
    const now = new Date();
    const output = result.ok
      ? stageOutput(result, current.schema_mode)
      : await this.fallback(result, current.schema_mode, current.processor_id);
    const packData = output && {
      _id: result.request_id,
      pipeline_id,
      service_item_id: pipeline.service_item_id,
      stage,
      data_json: output.pack_data_json,
      gen_ui_json: output.gen_ui_json,
      gen_ui_valid: output.gen_ui_valid,
      created_at: now,
    };
    if (!running) {
      // A redelivery of the result that ended the stage: its PackData history entry, written
      // beside that move, may be what failed (an insert keyed by the request id: one entry).
      if (packData && current.state === 'OK') await this.deps.store.savePackData(packData);
      else if (current.state === 'FAILED' && endedWithoutResult(current) && !current.late_result)
        await this.late(pipeline_id, stage, result, now);
      return;
    }
    const expect: StageExpectation = {
      states: RUNNING_STATES,
      request_id: result.request_id,
      ...(remembered?.rev !== undefined && { rev: remembered.rev }),
    };
    const ended = {
      finished_at: now,
      cost: result.cost,
      unpriced: unpricedCall(result),
      // Which model answered (issue 29); results sent before fallbacks existed lack both.
      answered_model_id: result.answered_model_id ?? (result.ok ? result.llm_model_id : null),
      fallback_from: result.fallback_from ?? null,
    };
    const stored = output && {
      pack_data_json: output.pack_data_json,
      gen_ui_json: output.gen_ui_json,
      gen_ui_valid: output.gen_ui_valid,
      gen_ui_error: output.gen_ui_error,
    };
    const error = !output
      ? result.error
        ? `${result.error.kind}: ${result.error.message}`
        : 'generation failed'
      : output.failure;
    if (pipeline.superseded_by !== undefined) {
      // A newer run took over (retrigger, CONFIG trigger): the result and its cost are recorded, nothing follows.
      const fields: Partial<StageRecord> = {
        ...ended,
        ...stored,
        state: error === null ? 'OK' : 'FAILED',
        error,
        superseded: true,
      };
      const saved = packData ? settled(this.deps.store.savePackData(packData)) : null;
      const moved = await this.moves.endMove(
        pipeline_id,
        stage,
        expect,
        fields,
        [],
        result.cost,
        unpricedCall(result),
      );
      await saved;
      if (moved) this.moves.ended(stage, error === null ? 'OK' : 'FAILED', current, now);
      else if (!fresh) await this.again(result);
      return;
    }
    const live: StageExpectation = { ...expect, current: true };
    if (error !== null || !packData) {
      const reason = error ?? 'generation failed';
      const failed: Partial<StageRecord> = { ...ended, ...stored, state: 'FAILED', error: reason };
      const events = await this.moves.finishing(withStages(pipeline, { [stage]: failed }), 'FAILED', [
        `${stage}: ${reason}`,
      ]);
      // An executor's failed report is kept as the stage's PackData version too.
      const saved = packData ? settled(this.deps.store.savePackData(packData)) : null;
      const moved = await this.moves.endMove(
        pipeline_id,
        stage,
        live,
        failed,
        events,
        result.cost,
        unpricedCall(result),
      );
      await saved;
      if (moved) this.moves.ended(stage, 'FAILED', current, now);
      else if (!fresh) await this.again(result);
      return;
    }
    const lookup =
      early && service_id === pipeline.service_id ? early : lookups.active(pipeline.service_id, wanted);
    // The history entry overlaps the move: the result was checked against the running stage above.
    const saved = settled(this.deps.store.savePackData(packData));
    const done: Partial<StageRecord> = { ...ended, ...stored, state: 'OK', error: null };
    const moved = await this.okMove(pipeline, stage, current, done, live, result, lookup);
    await saved;
    if (moved) this.moves.ended(stage, 'OK', current, now);
    else if (!fresh) await this.again(result);
  }

  /**
   * A generative UI stage whose reply failed the schema sent (spec 2.4 rule 4, stage-output.ts):
   * the data, checked against the processor's own schema, decides; null fails the stage.
   */
  private async fallback(
    result: GenerateResult,
    mode: StageRecord['schema_mode'],
    processorId: number | null,
  ): Promise<StageOutput | null> {
    if (result.error?.kind !== 'structured_output' || mode === null) return null;
    let dataSchema: JsonSchema | null = null;
    if (mode === 'combined') {
      const processor = processorId === null ? null : await this.deps.findProcessor(processorId);
      if (!processor?.response_schema_json) return null;
      dataSchema = JSON.parse(processor.response_schema_json) as JsonSchema;
    }
    return genUiFallback(result, mode, dataSchema);
  }

  /**
   * A result that came after the sweeper failed its stage (docs/decisions/0028): the stage stays
   * FAILED, but the call was made and billed, so its cost is the stage's and counts in the
   * pipeline's total. Once per stage request (a redelivery finds `late_result` set).
   */
  private async late(pipelineId: number, stage: Stage, result: GenerateResult, now: Date): Promise<void> {
    const late = { ok: result.ok, cost: result.cost, unpriced: result.unpriced, received_at: now };
    await this.deps.store.move(
      pipelineId,
      stage,
      { states: ['FAILED'], request_id: result.request_id, no_late_result: true },
      { [stage]: { cost: result.cost, unpriced: unpricedCall(result), late_result: late } },
      [],
      result.cost,
      unpricedCall(result),
    );
  }

  /**
   * A result of an earlier attempt of `stage` in this pipeline: its cost (or unpriced call) is
   * counted once per request id (a redelivery, or the same result on another replica, finds it
   * counted); nothing else changes. A request id this pipeline never sent counts nothing.
   */
  private async replaced(
    pipeline: PipelineRecord,
    stage: Stage,
    current: StageRecord,
    result: GenerateResult,
  ): Promise<void> {
    const attempt = attemptOf(result.request_id, pipeline._id, stage);
    if (attempt === null || attempt >= current.attempt) return;
    const unpriced = unpricedCall(result);
    if (result.cost === null && !unpriced) return;
    if (pipeline.counted?.[result.request_id]) return;
    await this.deps.store.countLate(pipeline._id, result.request_id, result.cost, unpriced);
  }

  /** The remembered copy proved stale (or could not settle the result): decide on a fresh read. */
  private again(result: GenerateResult): Promise<void> {
    this.deps.store.forget(result.reply_to!.pipeline_id);
    return this.result(result, true);
  }

  /** A stage's OK: rule 1 starts the next stage's active processor in the same write, else the run may end. */
  private async okMove(
    pipeline: PipelineRecord,
    stage: Stage,
    current: StageRecord,
    done: Partial<StageRecord>,
    expect: StageExpectation,
    result: GenerateResult,
    lookup: Promise<ProcessorRecord | null>,
  ): Promise<PipelineRecord | null> {
    const { cost } = result;
    const unpriced = unpricedCall(result);
    const next = NEXT_STAGE[stage];
    const processor = await lookup;
    if (!next) {
      const events = await this.moves.finishing(
        withStages(pipeline, { [stage]: done }),
        'COMPLETED',
        [],
        processor,
      );
      return this.moves.endMove(pipeline._id, stage, expect, done, events, cost, unpriced);
    }
    if (!processor) {
      // Nothing starts by itself after this stage: unless a later stage has an active processor
      // (its previous stage's PackData is then awaited from outside, rule 2), the run is over.
      const waiting = await laterProcessor(this.deps.nextProcessors, pipeline.service_id, next);
      const events = waiting
        ? []
        : await this.moves.finishing(withStages(pipeline, { [stage]: done }), 'COMPLETED', []);
      return this.moves.endMove(pipeline._id, stage, expect, done, events, cost, unpriced);
    }
    if (!this.deps.switches.processors()) {
      // AI processors switched off (0040): the stage ends OK, the next one is not started and says why.
      const note = pipeline.stages[next].state === null ? { [next]: { error: AI_PROCESSORS_OFF_NOTE } } : {};
      const set = { [stage]: done, ...note };
      return this.deps.store.move(pipeline._id, stage, expect, set, [], cost, unpriced);
    }
    const exhausted = await this.deps.budget.exhausted(pipeline.service_id);
    if (exhausted !== null) {
      // The Service's AI budget is spent (0046): the stage ends OK, the next one is recorded
      // FAILED with the reason and the run ends, its Change Instance told why, in one write.
      const set = {
        [stage]: done,
        [next]: { state: 'FAILED' as const, error: exhausted, finished_at: done.finished_at ?? new Date() },
      };
      const events = await this.moves.finishing(withStages(pipeline, set), 'FAILED', [
        `${next}: ${exhausted}`,
      ]);
      const moved = await this.deps.store.move(pipeline._id, stage, expect, set, events, cost, unpriced);
      if (moved) await this.deps.requests.publish(pipeline._id, events);
      return moved;
    }
    // The stage's OK and the next stage's request in one write: they cannot come apart.
    const withData = { ...pipeline, stages: { ...pipeline.stages, [stage]: { ...current, ...done } } };
    return this.moves.start(withData, next, processor, { [stage]: done }, { stage, expect, cost, unpriced });
  }
}
