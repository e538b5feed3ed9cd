import type { JsonSchema, ProcessorKind } from '@pack/contracts';
import { LOST_RACE, retryOnConflict } from '@pack/reliability';
import {
  NEXT_STAGE,
  RUNNING_STATES,
  type GenerateResult,
  type PipelineRecord,
  type StageRecord,
  type StageState,
} from '../records/pipeline-records';
import { KIND_OF } from '../records/stage-kinds';
import type { PipelineDeps } from '../stage-moves/pipeline-deps';
import type { StageMoves } from '../stage-moves/stage-moves';
import { failed } from './failed';
import { afterItsEnd, ofReplacedAttempt } from './late';
import { ok } from './ok';
import type { ResultParts, Settling } from './settling';
import { genUiFallback, stageOutput, type StageOutput } from './stage-output';
import { superseded } from './superseded';
import { cancelled } from './cancelled';

/**
 * Generate results of pipeline stages (rules 1 and 6 of spec 3.1, docs/decisions/0024 and 0028):
 * the stage ends OK or FAILED, and an OK starts the next stage's active processor in the same
 * write, or ends the run. This file decides which outcome a result is; each has its own file:
 * ok.ts, failed.ts, superseded.ts (a newer run took over), cancelled.ts (its Change Instance was
 * cancelled), late.ts (its attempt is over or was
 * replaced). A decision taken on this replica's remembered copy of the pipeline that the copy
 * cannot settle is taken once more on a fresh read (re-ask).
 */
export class StageResults {
  private readonly parts: ResultParts;

  constructor(deps: PipelineDeps, moves: StageMoves) {
    this.parts = { deps, moves };
  }

  /**
   * A generate result: only the attempt it names, while it is running, moves (dedupe). The first
   * decision reads the pipeline from memory when this replica remembers it (the move then expects
   * its `rev`); one that loses its race is taken again on a fresh read, which is final.
   */
  async result(result: GenerateResult): Promise<void> {
    if (!result.reply_to) return;
    const { store } = this.parts.deps;
    const id = result.reply_to.pipeline_id;
    await retryOnConflict(
      async (attempt) => {
        if (attempt === 1) return this.decide(result, store.recent(id), true);
        // Re-ask: the remembered copy proved stale, or the move lost its race.
        store.forget(id);
        return this.decide(result, null, false);
      },
      { tries: 2, keptChanging: () => new Error(`the result ${result.request_id} kept losing its race`) },
    );
  }

  /** One decision on `remembered` (this replica's copy) or, without one, on a fresh read. */
  private async decide(
    result: GenerateResult,
    remembered: PipelineRecord | null,
    mayAskAgain: boolean,
  ): Promise<void | typeof LOST_RACE> {
    const { pipeline_id, stage, service_id } = result.reply_to!;
    const { deps } = this.parts;
    // What an OK result looks up next (the next stage's processor, or at the end the optimizer),
    // read beside the pipeline when the result names its Service: one round trip less per stage.
    const next = NEXT_STAGE[stage];
    const wanted: ProcessorKind = next ? KIND_OF[next] : 'pack_optimizer';
    const early =
      service_id === undefined ? undefined : settled(deps.nextProcessors.active(service_id, wanted));
    const pipeline = remembered ?? (await deps.store.find(pipeline_id));
    const current = pipeline?.stages[stage];
    const running = RUNNING_STATES.includes(current?.state as StageState);
    if (remembered && (current?.request_id !== result.request_id || !running)) return LOST_RACE;
    if (!pipeline || !current) return;
    // An earlier attempt of the stage (replaced by a trigger or a push): its cost only (late.ts).
    if (current.request_id !== result.request_id)
      return ofReplacedAttempt(this.parts, pipeline, stage, current, result, unpricedCall(result));
    const now = new Date();
    const output = result.ok
      ? stageOutput(result, current.schema_mode)
      : await this.fallback(result, current.schema_mode, current.processor_id);
    // The result that ended the stage, again, or one after the sweeper failed it (late.ts).
    if (!running)
      return afterItsEnd(this.parts, pipeline_id, stage, current, result, now, unpricedCall(result));
    const settling: Settling = {
      result,
      pipeline,
      stage,
      current,
      now,
      expect: {
        states: RUNNING_STATES,
        request_id: result.request_id,
        ...(remembered?.rev !== undefined && { rev: remembered.rev }),
      },
      ended: endedFields(result, output, now),
      error: !output
        ? result.error
          ? `${result.error.kind}: ${result.error.message}`
          : 'generation failed'
        : output.failure,
      unpriced: unpricedCall(result),
    };
    // The output's PackData stays on the stage; it goes into the history once replaced (0062).
    let ended: 'OK' | 'FAILED' | null;
    if (pipeline.superseded_by !== undefined) ended = await superseded(this.parts, settling);
    else if (pipeline.cancelled !== undefined) ended = await cancelled(this.parts, settling);
    else if (settling.error !== null || !output) ended = await failed(this.parts, settling);
    else {
      const lookup =
        early && service_id === pipeline.service_id
          ? early
          : deps.nextProcessors.active(pipeline.service_id, wanted);
      ended = await ok(this.parts, settling, lookup);
    }
    if (ended) this.parts.moves.ended(stage, ended, current, now);
    else if (mayAskAgain) return LOST_RACE;
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
      const processor = processorId === null ? null : await this.parts.deps.findProcessor(processorId);
      if (!processor?.response_schema_json) return null;
      dataSchema = JSON.parse(processor.response_schema_json) as JsonSchema;
    }
    return genUiFallback(result, mode, dataSchema);
  }
}

/** A call answered by a model without prices: its cost is unknown, not 0 (nothing billed is not unpriced). */
function unpricedCall(result: GenerateResult): boolean {
  return result.unpriced && result.usage !== null;
}

/** A lookup or write started early that may go unused or fail: never an unhandled rejection. */
function settled<T>(promise: Promise<T>): Promise<T> {
  promise.catch(() => undefined);
  return promise;
}

/** The fields every ending of a running stage sets: when, the cost, who answered, the output. */
function endedFields(result: GenerateResult, output: StageOutput | null, now: Date): Partial<StageRecord> {
  return {
    finished_at: now,
    cost: result.cost,
    unpriced: unpricedCall(result),
    // Which model answered; results sent before fallbacks existed lack both.
    answered_model_id: result.answered_model_id ?? (result.ok ? result.llm_model_id : null),
    fallback_from: result.fallback_from ?? null,
    ...(output && {
      pack_data_json: output.pack_data_json,
      gen_ui_json: output.gen_ui_json,
      gen_ui_valid: output.gen_ui_valid,
      gen_ui_error: output.gen_ui_error,
    }),
  };
}
