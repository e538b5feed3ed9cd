import { randomUUID } from 'node:crypto';
import type { Envelope, Principal, ProcessorKind, Stage } from '@pack/contracts';
import { ConflictError, NotFoundError } from '@pack/errors';
import type { ProcessorRecord } from './model';
import {
  NEXT_STAGE,
  PREVIOUS_STAGE,
  RUNNING_STATES,
  type GenerateResult,
  type PipelineRecord,
  type ServiceItemRecord,
  type StageExpectation,
  type StageRecord,
  type StageState,
} from './pipeline-model';
import { progressEvents, withStages } from './progress';
import { draftPipeline, scheduleStage } from './stage-request';
import { KIND_OF, type ChangeInstanceNews, type PipelineDeps, type RunOutcome } from './pipeline-deps';
import { stageOutput } from './stage-output';

export {
  KIND_OF,
  type ActiveProcessors,
  type ChangeInstanceNews,
  type PipelineDeps,
  type PipelineObserver,
  type RunOutcome,
} from './pipeline-deps';

const STARTABLE: (StageState | null)[] = [null, 'OK', 'FAILED'];

/** A lookup started early that may go unused: its failure must not become an unhandled rejection. */
function settled<T>(promise: Promise<T>): Promise<T> {
  promise.catch(() => undefined);
  return promise;
}

/**
 * Pipelines (spec 2.5, 3.1; DESIGN section 7). Every stage move is one conditional update on the
 * stage's current state (and attempt or request id), so a redelivered or late generate result, a
 * repeated trigger or a redelivered approval cannot move a stage twice (docs/decisions/0024).
 */
export class Pipelines {
  constructor(private readonly deps: PipelineDeps) {}

  /** Endpoint 3: starts `stage` of the Service Item from its latest approved declaration. */
  async trigger(principal: Principal, serviceItemId: number, stage: Stage): Promise<PipelineRecord> {
    const item = await this.visibleItem(principal, serviceItemId);
    const processor = await this.deps.processors.active(item.service_id, KIND_OF[stage]);
    if (!processor)
      throw new ConflictError(
        `the Service has no active ${KIND_OF[stage]} processor to run the ${stage} stage`,
      );
    const previous = PREVIOUS_STAGE[stage];
    if (previous === null)
      return this.startRun(item, processor, `trigger:${randomUUID()}`) as Promise<PipelineRecord>;
    const latest = await this.deps.store.latest(serviceItemId);
    if (!latest || latest.stages[previous].pack_data_json === null)
      throw new ConflictError(`the ${previous} stage has no PackData yet: run it first`);
    const started = await this.start(latest, stage, processor, {});
    if (!started) throw new ConflictError(`the ${stage} stage is already running`);
    return started;
  }

  /** Endpoint 6. */
  async latest(principal: Principal, serviceItemId: number): Promise<PipelineRecord> {
    await this.visibleItem(principal, serviceItemId);
    const found = await this.deps.store.latest(serviceItemId);
    if (!found) throw new NotFoundError('This Service Item has no pipeline yet');
    return found;
  }

  /** Endpoint 7. */
  async get(principal: Principal, id: number): Promise<PipelineRecord> {
    const found = await this.deps.store.find(id);
    if (!found || !(await this.mayAccess(principal, found.service_id)))
      throw new NotFoundError(`No pipeline ${id}`);
    return found;
  }

  /**
   * A Change Instance event: an approved one is the item's latest approved declaration, and
   * starts CONFIG when the Service has an active config processor (rule 6), once per approval.
   */
  async changeInstance(news: ChangeInstanceNews): Promise<void> {
    if (news.state !== 'APPROVED') return;
    const item: ServiceItemRecord = {
      service_item_id: news.service_item_id,
      service_id: news.service.id,
      declaration_id: news.declaration_id,
      declaration_json: news.declaration_json,
      change_instance_id: news.change_instance_id,
    };
    const [, processor] = await Promise.all([
      this.deps.items.applyApproved(item),
      this.deps.processors.active(item.service_id, 'config'),
    ]);
    if (processor) await this.startRun(item, processor, `approval:${news.change_instance_id}`);
  }

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
    const lookups = this.deps.nextProcessors ?? this.deps.processors;
    const early = service_id === undefined ? undefined : settled(lookups.active(service_id, wanted));
    const remembered = fresh ? null : this.deps.store.recent(pipeline_id);
    const pipeline = remembered ?? (await this.deps.store.find(pipeline_id));
    const current = pipeline?.stages[stage];
    const running = RUNNING_STATES.includes(current?.state as StageState);
    if (remembered && (current?.request_id !== result.request_id || !running)) return this.again(result);
    if (!pipeline || !current || current.request_id !== result.request_id) return;
    const now = new Date();
    const output = result.ok ? stageOutput(result, current.schema_mode) : null;
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
      return;
    }
    const expect: StageExpectation = {
      states: RUNNING_STATES,
      request_id: result.request_id,
      ...(remembered?.rev !== undefined && { rev: remembered.rev }),
    };
    const ended = { finished_at: now, cost: result.cost };
    if (!output || !packData) {
      const error = result.error ? `${result.error.kind}: ${result.error.message}` : 'generation failed';
      const failed: Partial<StageRecord> = { ...ended, state: 'FAILED', error };
      const events = await this.finishing(withStages(pipeline, { [stage]: failed }), 'FAILED', [
        `${stage}: ${error}`,
      ]);
      const moved = await this.endMove(pipeline_id, stage, expect, failed, events, result.cost);
      if (moved) this.ended(stage, 'FAILED', current, now);
      else if (remembered) await this.again(result);
      return;
    }
    const lookup =
      early && service_id === pipeline.service_id ? early : lookups.active(pipeline.service_id, wanted);
    // The history entry overlaps the move: the result was checked against the running stage above.
    const saved = settled(this.deps.store.savePackData(packData));
    const done: Partial<StageRecord> = { ...ended, ...output, state: 'OK', error: null };
    const moved = await this.okMove(pipeline, stage, current, done, expect, result.cost, lookup);
    await saved;
    if (moved) this.ended(stage, 'OK', current, now);
    else if (remembered) await this.again(result);
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
    cost: string | null,
    lookup: Promise<ProcessorRecord | null>,
  ): Promise<PipelineRecord | null> {
    const next = NEXT_STAGE[stage];
    const processor = await lookup;
    if (!next) {
      const events = await this.finishing(
        withStages(pipeline, { [stage]: done }),
        'COMPLETED',
        [],
        processor,
      );
      return this.endMove(pipeline._id, stage, expect, done, events, cost);
    }
    if (!processor) return this.endMove(pipeline._id, stage, expect, done, [], cost);
    // The stage's OK and the next stage's request in one write: they cannot come apart.
    const withData = { ...pipeline, stages: { ...pipeline.stages, [stage]: { ...current, ...done } } };
    return this.start(withData, next, processor, { [stage]: done }, { stage, expect, cost });
  }

  /**
   * Fails a stage still running `requestId` (the timeout sweeper, docs/decisions/0028): the same
   * conditional move as a result's, so of a late result and any sweeper only one wins.
   */
  async failRunning(pipelineId: number, stage: Stage, requestId: string, error: string, now: Date) {
    const pipeline = await this.deps.store.find(pipelineId);
    if (!pipeline) return false;
    const failed: Partial<StageRecord> = { state: 'FAILED', finished_at: now, error };
    // The run ends here as with a failed result: its Change Instance and the optimizer hear of it.
    const events = await this.finishing(withStages(pipeline, { [stage]: failed }), 'FAILED', [
      `${stage}: ${error}`,
    ]);
    const moved = await this.endMove(
      pipelineId,
      stage,
      { states: RUNNING_STATES, request_id: requestId },
      failed,
      events,
      null,
    );
    // started_at is untouched by the move: the duration is still scheduled -> now.
    if (moved) this.ended(stage, 'FAILED', moved.stages[stage], now);
    return moved !== null;
  }

  /** A stage's last move of a run (FAILED, or OK with no next stage), with the run's end events. */
  private async endMove(
    pipelineId: number,
    stage: Stage,
    expect: StageExpectation,
    fields: Partial<StageRecord>,
    events: Envelope[],
    cost: string | null,
  ) {
    const moved = await this.deps.store.move(pipelineId, stage, expect, { [stage]: fields }, events, cost);
    if (moved) await this.deps.requests.publish(pipelineId, events);
    return moved;
  }

  /**
   * Schedules `stage` (with `also`, other stages' fields, in the same write) and then marks it
   * WAITING_FOR_RESPONSE. By default the move expects `stage` not running at its current
   * attempt; `on` moves conditional on another stage instead (a result's stage).
   */
  async start(
    pipeline: PipelineRecord,
    stage: Stage,
    processor: ProcessorRecord,
    also: Partial<Record<Stage, Partial<StageRecord>>>,
    on?: { stage: Stage; expect: StageExpectation; cost: string | null; progress?: boolean },
  ): Promise<PipelineRecord | null> {
    const now = new Date();
    const scheduled = scheduleStage(pipeline, stage, processor, this.deps.catalogSchema(), now, randomUUID());
    const set = { ...also, [stage]: scheduled.fields };
    // A trigger or a push (re)starts the work: the Change Instance is IN_PROGRESS (again). Rule 1's
    // next stage goes on within a run that already is.
    const progress =
      on === undefined || on.progress ? progressEvents(withStages(pipeline, set), 'IN_PROGRESS') : [];
    const moved = await this.deps.store.move(
      pipeline._id,
      on?.stage ?? stage,
      on?.expect ?? { states: STARTABLE, attempt: pipeline.stages[stage].attempt },
      set,
      [scheduled.event, ...progress],
      on?.cost ?? null,
    );
    if (!moved) return null;
    this.deps.observer.transition(stage, 'SCHEDULED');
    return (await this.waiting(moved, stage, scheduled.event, progress)) ?? moved;
  }

  /** A new run from CONFIG with the item's execution context; null when a pipeline of this origin exists (a repeat). */
  async startRun(
    item: ServiceItemRecord,
    processor: ProcessorRecord,
    origin: string,
  ): Promise<PipelineRecord | null> {
    const { store } = this.deps;
    const now = new Date();
    const [id, run, context] = await Promise.all([
      store.nextId(),
      store.nextRun(item.service_item_id),
      this.deps.context?.render(item.service_item_id),
    ]);
    const draft = { ...draftPipeline(id, item, origin, now, context ?? null), run };
    const scheduled = scheduleStage(draft, 'CONFIG', processor, this.deps.catalogSchema(), now, randomUUID());
    const record: PipelineRecord = {
      ...draft,
      stages: { ...draft.stages, CONFIG: { ...draft.stages.CONFIG, ...scheduled.fields } },
    };
    const progress = progressEvents(record, 'IN_PROGRESS');
    if (!(await store.insert(record, [scheduled.event, ...progress]))) return null;
    this.deps.observer.transition('CONFIG', 'SCHEDULED');
    return (await this.waiting(record, 'CONFIG', scheduled.event, progress)) ?? record;
  }

  /**
   * SCHEDULED -> WAITING_FOR_RESPONSE once the request and the move's other events are sent
   * (published at once, the outbox relay as the fallback, docs/decisions/0028); a result that
   * came first wins.
   */
  private async waiting(pipeline: PipelineRecord, stage: Stage, request: Envelope, others: Envelope[]) {
    const moved = await this.deps.requests.send(pipeline._id, stage, request, [request, ...others]);
    if (moved) this.deps.observer.transition(stage, 'WAITING_FOR_RESPONSE');
    return moved;
  }

  /**
   * The events of a run's end (its Change Instance's progress, the Pack Optimizer's request);
   * `optimizer`, when given, is the Service's active Pack Optimizer looked up already.
   */
  finishing(
    pipeline: PipelineRecord,
    outcome: RunOutcome,
    reasons: string[],
    optimizer?: ProcessorRecord | null,
  ): Promise<Envelope[]> {
    return (
      this.deps.finishing?.(pipeline, outcome, reasons, optimizer) ??
      Promise.resolve(progressEvents(pipeline, outcome, reasons))
    );
  }

  private ended(stage: Stage, state: 'OK' | 'FAILED', before: StageRecord, now: Date): void {
    this.deps.observer.transition(stage, state);
    const seconds = before.started_at ? (now.getTime() - before.started_at.getTime()) / 1000 : 0;
    this.deps.observer.finished(stage, state === 'OK' ? 'ok' : 'failed', seconds);
  }

  /** The item with its latest approved declaration, if the caller may see it (404 otherwise). */
  async visibleItem(principal: Principal, serviceItemId: number): Promise<ServiceItemRecord> {
    const item = await this.deps.items.find(serviceItemId);
    if (!item || !(await this.mayAccess(principal, item.service_id)))
      throw new NotFoundError(
        `No Service Item ${serviceItemId} with an approved declaration among your Services`,
      );
    return item;
  }

  private async mayAccess(principal: Principal, serviceId: number): Promise<boolean> {
    if (principal.role === 'admin') return true;
    const service = await this.deps.directory.service(serviceId);
    return service !== null && service.owner_id === principal.id;
  }
}
