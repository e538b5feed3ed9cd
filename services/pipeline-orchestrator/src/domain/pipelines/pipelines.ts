import { randomUUID } from 'node:crypto';
import { STAGES, type Envelope, type Principal, type Stage } from '@pack/contracts';
import { ConflictError, NotFoundError } from '@pack/errors';
import type { ProcessorRecord } from '../processors/processor-records';
import {
  PREVIOUS_STAGE,
  RUNNING_STATES,
  type GenerateResult,
  type PipelineRecord,
  type ServiceItemRecord,
  type StageExpectation,
  type StageRecord,
  type StageState,
} from './pipeline-records';
import { progressEvents, withStages } from './progress';
import { carried, draftPipeline, scheduleStage } from '../stage-requests/stage-request';
import { KIND_OF, type ChangeInstanceNews, type PipelineDeps, type RunOutcome } from './pipeline-deps';
import { StageResults } from '../stage-results/stage-results';

export {
  KIND_OF,
  type ActiveProcessors,
  type ChangeInstanceNews,
  type PipelineDeps,
  type PipelineObserver,
  type RunOutcome,
} from './pipeline-deps';

const STARTABLE: (StageState | null)[] = [null, 'OK', 'FAILED'];

/**
 * Pipelines (spec 2.5, 3.1; DESIGN section 7). Every stage move is one conditional update on the
 * stage's current state (and attempt or request id), so a redelivered or late generate result, a
 * repeated trigger or a redelivered approval cannot move a stage twice (docs/decisions/0024).
 */
export class Pipelines {
  private readonly results: StageResults;

  constructor(private readonly deps: PipelineDeps) {
    this.results = new StageResults(deps, this);
  }

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
    if (latest.declaration_id !== item.declaration_id) {
      // Spec endpoint rule 2: the latest approved declaration, approved after the latest run
      // began (with no config processor to start one): a new run of it at `stage`, on the
      // earlier stages' PackData of the item's latest run.
      const run = await this.startRun(
        item,
        processor,
        `trigger:${randomUUID()}`,
        {},
        { at: stage, from: latest },
      );
      if (!run) throw new ConflictError(`the ${stage} stage could not be started; try again`);
      return run;
    }
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

  /** A generate result (stage-results.ts). */
  result(result: GenerateResult): Promise<void> {
    return this.results.result(result);
  }

  /**
   * Fails a stage still running `requestId` (the timeout sweeper, docs/decisions/0028): the same
   * conditional move as a result's, so of a late result and any sweeper only one wins.
   */
  async failRunning(pipelineId: number, stage: Stage, requestId: string, error: string, now: Date) {
    const pipeline = await this.deps.store.find(pipelineId);
    if (!pipeline) return false;
    const superseded = pipeline.superseded_by !== undefined;
    const failed: Partial<StageRecord> = {
      state: 'FAILED',
      finished_at: now,
      error,
      ...(superseded && { superseded }),
    };
    // The run ends here as with a failed result: its Change Instance and the optimizer hear of it
    // (a superseded run's end is nobody's news: a newer run works on its Change Instance).
    const events = superseded
      ? []
      : await this.finishing(withStages(pipeline, { [stage]: failed }), 'FAILED', [`${stage}: ${error}`]);
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
  async endMove(
    pipelineId: number,
    stage: Stage,
    expect: StageExpectation,
    fields: Partial<StageRecord>,
    events: Envelope[],
    cost: string | null,
    unpriced = false,
  ) {
    const moved = await this.deps.store.move(
      pipelineId,
      stage,
      expect,
      { [stage]: fields },
      events,
      cost,
      unpriced,
    );
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
    on?: {
      stage: Stage;
      expect: StageExpectation;
      cost: string | null;
      unpriced?: boolean;
      progress?: boolean;
    },
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
      on?.unpriced ?? false,
    );
    if (!moved) return null;
    this.deps.observer.transition(stage, 'SCHEDULED');
    return (await this.waiting(moved, stage, scheduled.event, progress)) ?? moved;
  }

  /**
   * A new run from CONFIG with the item's execution context; null when a pipeline of this origin
   * exists (a repeat). The item's previous run, when it still has a stage running, is superseded
   * (spec 3.1 rule 4, "Retrigger restarts the pipeline from CONFIG"): its pending results are
   * recorded with their cost and it starts no further stage (stage-results.ts).
   */
  async startRun(
    item: ServiceItemRecord,
    processor: ProcessorRecord,
    origin: string,
    extra: Pick<PipelineRecord, 'push_retriggers'> = {},
    begin: { at: Stage; from: PipelineRecord } | null = null,
  ): Promise<PipelineRecord | null> {
    const { store } = this.deps;
    const now = new Date();
    const at = begin?.at ?? 'CONFIG';
    const [id, run, context, previous] = await Promise.all([
      store.nextId(),
      store.nextRun(item.service_item_id),
      at === 'CONFIG' ? this.deps.context?.render(item.service_item_id) : null,
      store.latest(item.service_item_id),
    ]);
    const draft = { ...draftPipeline(id, item, origin, now, context ?? null), run, ...extra };
    if (begin)
      for (const earlier of STAGES.slice(0, STAGES.indexOf(at)))
        draft.stages[earlier] = carried(begin.from.stages[earlier]);
    const scheduled = scheduleStage(draft, at, processor, this.deps.catalogSchema(), now, randomUUID());
    const record: PipelineRecord = {
      ...draft,
      stages: { ...draft.stages, [at]: { ...draft.stages[at], ...scheduled.fields } },
    };
    const progress = progressEvents(record, 'IN_PROGRESS');
    if (!(await store.insert(record, [scheduled.event, ...progress]))) return null;
    this.deps.observer.transition(at, 'SCHEDULED');
    if (previous && previous.run < run) await store.supersede(previous._id, id);
    return (await this.waiting(record, at, scheduled.event, progress)) ?? record;
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

  /** Counts a stage's end (transition and duration). */
  ended(stage: Stage, state: 'OK' | 'FAILED', before: StageRecord, now: Date): void {
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
