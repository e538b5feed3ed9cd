import { randomUUID } from 'node:crypto';
import { STAGES, type Principal, type Stage } from '@pack/contracts';
import { ConflictError, NotFoundError } from '@pack/errors';
import { AI_PROCESSORS_OFF_NOTE, aiProcessorsOff } from '../records/ai-switches';
import { budgetSpent } from '../budgets/budgets';
import type { ProcessorRecord } from '../records/processor-records';
import { carried, draftPipeline, emptyStage, scheduleStage } from '../stage-requests/stage-request';
import { StageResults } from '../stage-results/stage-results';
import type { PipelineDeps } from '../stage-moves/pipeline-deps';
import {
  PREVIOUS_STAGE,
  RUNNING_STATES,
  type ChangeInstanceNews,
  type PipelineRecord,
  type ServiceItemRecord,
  type StageRecord,
} from '../records/pipeline-records';
import { KIND_OF } from '../records/stage-kinds';
import { progressEvents, withStages } from '../stage-moves/progress';
import { StageMoves } from '../stage-moves/stage-moves';
import { cancelRuns, requireNotCancelled } from './cancellation';
import { mayAccess, visibleItem } from './visibility';

/**
 * Pipelines (spec 2.5, 3.1; DESIGN section 7): approvals, triggers and new runs start stages,
 * generate results end them (stage-results/, StageResults), the sweeper fails the ones that ran out of time;
 * every move is one of StageMoves' conditional updates (stage-moves.ts, docs/decisions/0024).
 */
export class Pipelines {
  /** The stage moves this use case shares with results and pushes (stage-moves/). */
  readonly moves: StageMoves;
  /** Generate results of stages (stage-results/): the pipeline consumer calls them directly. */
  readonly results: StageResults;

  constructor(private readonly deps: PipelineDeps) {
    this.moves = new StageMoves(deps);
    this.results = new StageResults(deps, this.moves);
  }

  /** Endpoint 3: starts `stage` of the Service Item from its latest approved declaration. */
  async trigger(principal: Principal, serviceItemId: number, stage: Stage): Promise<PipelineRecord> {
    const item = await this.visibleItem(principal, serviceItemId);
    await requireNotCancelled(this.deps, item, `triggering the ${stage} stage`);
    this.requireAiProcessors(`triggering the ${stage} stage`);
    await this.requireBudget(item.service_id, `triggering the ${stage} stage`);
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
    const started = await this.moves.start(latest, stage, processor, {});
    if (!started) {
      // The run may have been cancelled since the check above (the move expects it not to be).
      await requireNotCancelled(this.deps, item, `triggering the ${stage} stage`);
      throw new ConflictError(`the ${stage} stage is already running`);
    }
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
    if (!found || !(await mayAccess(this.deps, principal, found.service_id)))
      throw new NotFoundError(`No pipeline ${id}`);
    return found;
  }

  /**
   * A Change Instance event: an approved one is the item's latest approved declaration, and
   * starts CONFIG when the Service has an active config processor (rule 6), once per approval.
   */
  async changeInstance(news: ChangeInstanceNews): Promise<void> {
    if (news.state === 'CANCELLED') return cancelRuns(this.deps, news);
    if (news.state !== 'APPROVED') return;
    const item: ServiceItemRecord = {
      service_item_id: news.service_item_id,
      service_id: news.service.id,
      declaration_id: news.declaration_id,
      declaration_json: news.declaration_json,
      change_instance_id: news.change_instance_id,
      ...(news.approval_seq === undefined ? {} : { approval_seq: news.approval_seq }),
    };
    const [applied, processor] = await Promise.all([
      this.deps.items.applyApproved(item),
      this.deps.approvalProcessors.active(item.service_id, 'config'),
    ]);
    if (!processor) return;
    // An approval a later one has overtaken (events out of order) starts no run of its outdated
    // declaration; a redelivery of the kept approval goes on (its run's origin makes it once).
    if (
      !applied &&
      (await this.deps.items.find(item.service_item_id))?.change_instance_id !== news.change_instance_id
    )
      return;
    const origin = `approval:${news.change_instance_id}`;
    if (!this.deps.switches.processors()) return this.notStarted(item, origin);
    const exhausted = await this.deps.budget.exhausted(item.service_id);
    if (exhausted !== null) return this.notStarted(item, origin, exhausted);
    await this.startRun(item, processor, origin);
  }

  /** Throws the 409 naming the Service's AI budget while it is spent (docs/decisions/0046). */
  async requireBudget(serviceId: number, what: string): Promise<void> {
    const exhausted = await this.deps.budget.exhausted(serviceId);
    if (exhausted !== null) throw budgetSpent(serviceId, what, exhausted);
  }

  /** Throws the 409 naming the state while the item's latest approval is a CANCELLED Change Instance (0055). */
  requireNotCancelled(item: ServiceItemRecord, what: string): Promise<void> {
    return requireNotCancelled(this.deps, item, what);
  }

  /** Throws the 409 naming `show_ai_processor` while AI processors are switched off. */
  requireAiProcessors(what: string): void {
    if (!this.deps.switches.processors()) throw aiProcessorsOff(what);
  }

  /**
   * An approval while AI processors are switched off (docs/decisions/0040): the item's new run
   * is stored with no stage started and the reason as its CONFIG's error, so the owner sees on
   * the pipeline why nothing runs; a trigger or retrigger starts it once the switch is on. Once
   * per approval (its origin), like a started run; a running older run is superseded as usual.
   * With `exhausted` (the Service's AI budget is spent, 0046) the CONFIG stage is recorded FAILED
   * with that reason instead, and the run's end goes to its Change Instance (FAILED, the reason).
   */
  private async notStarted(item: ServiceItemRecord, origin: string, exhausted?: string): Promise<void> {
    const { store } = this.deps;
    const [id, run, previous] = await Promise.all([
      store.nextId(),
      store.nextRun(item.service_item_id),
      store.latest(item.service_item_id),
    ]);
    const draft = { ...draftPipeline(id, item, origin, new Date()), run };
    const config: StageRecord =
      exhausted === undefined
        ? { ...emptyStage(), error: AI_PROCESSORS_OFF_NOTE }
        : { ...emptyStage(), state: 'FAILED', error: exhausted, finished_at: draft.created_at };
    const record: PipelineRecord = { ...draft, stages: { ...draft.stages, CONFIG: config } };
    const events =
      exhausted === undefined ? [] : await this.moves.finishing(record, 'FAILED', [`CONFIG: ${exhausted}`]);
    if (!(await store.insert(record, events))) return;
    if (previous && previous.run < run) await store.supersede(previous._id, id);
    if (events.length > 0) await this.deps.requests.publishEnd(id, events);
  }

  /**
   * Fails a stage still running `requestId` (the timeout sweeper, docs/decisions/0028): the same
   * conditional move as a result's, so of a late result and any sweeper only one wins.
   */
  async failRunning(pipelineId: number, stage: Stage, requestId: string, error: string, now: Date) {
    const pipeline = await this.deps.store.find(pipelineId);
    if (!pipeline) return false;
    const superseded = pipeline.superseded_by !== undefined;
    const stopped = superseded || pipeline.cancelled !== undefined;
    const failed: Partial<StageRecord> = {
      state: 'FAILED',
      finished_at: now,
      error,
      ...(superseded && { superseded }),
    };
    // The run ends here as with a failed result: its Change Instance and the optimizer hear of it
    // (a superseded run's end is nobody's news: a newer run works on its Change Instance; a
    // cancelled one's Change Instance is final).
    const events = stopped
      ? []
      : await this.moves.finishing(withStages(pipeline, { [stage]: failed }), 'FAILED', [
          `${stage}: ${error}`,
        ]);
    const moved = await this.moves.endMove(
      pipelineId,
      stage,
      { states: RUNNING_STATES, request_id: requestId },
      failed,
      events,
      null,
    );
    // started_at is untouched by the move: the duration is still scheduled -> now.
    if (moved) this.moves.ended(stage, 'FAILED', moved.stages[stage], now);
    return moved !== null;
  }

  /**
   * A new run from CONFIG with the item's execution context; null when a pipeline of this origin
   * exists (a repeat). The item's earlier runs that still have a stage running are superseded
   * (spec 3.1 rule 4, "Retrigger restarts the pipeline from CONFIG"): their pending results are
   * recorded with their cost and start no further stage (stage-results.ts). Of concurrent starts
   * the run numbered last stays live; an earlier one that finds it is withdrawn before its
   * request goes out and answers with it (docs/decisions/0024, "One live run").
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
    const itemId = item.service_item_id;
    // The context reads the item's earlier runs once the run number says there are any.
    const numbered = store.nextRun(itemId);
    const [id, run, context] = await Promise.all([
      store.nextId(),
      numbered,
      at === 'CONFIG'
        ? this.deps.context.render(
            itemId,
            numbered,
            { modelId: processor.llm_model_id, declarationId: item.declaration_id },
            origin.startsWith('approval:'),
          )
        : null,
    ]);
    // Earlier runs are marked before the insert below, so a repeat must be known first. Only an
    // approval's origin can come again (a redelivery); the others hold a fresh uuid or attempt.
    const hasEarlier = run > 1;
    if (hasEarlier && origin.startsWith('approval:') && (await store.hasOrigin(origin))) return null;
    const draft = { ...draftPipeline(id, item, origin, now, context), run, ...extra };
    if (begin)
      for (const earlier of STAGES.slice(0, STAGES.indexOf(at)))
        draft.stages[earlier] = carried(begin.from.stages[earlier]);
    const scheduled = scheduleStage(draft, at, processor, this.deps.catalogSchema(), now, randomUUID());
    const record: PipelineRecord = {
      ...draft,
      stages: { ...draft.stages, [at]: { ...draft.stages[at], ...scheduled.fields } },
    };
    const progress = progressEvents(record, 'IN_PROGRESS');
    // Before the insert: a result of an earlier run landing now starts no further stage. The
    // item's first run has no earlier one (no write), only a possibly newer concurrent one.
    if (hasEarlier) await store.supersedeOlder(itemId, run, id);
    const inserted = await store.insert(record, [scheduled.event, ...progress]);
    if (!inserted) {
      if (hasEarlier) await store.unsupersede(itemId, id);
      return null;
    }
    this.deps.observer.transition(at, 'SCHEDULED');
    // After it: a concurrent start inserted after the first mark is an earlier run (marked
    // again here), or a later one (the insert read the item's newest run after writing this one).
    if (hasEarlier) await store.supersedeOlder(itemId, run, id);
    const newest = inserted.later;
    if (newest) {
      const request = scheduled.fields.request_id!;
      const reason = `superseded: run ${newest.run} of the item started at the same time and replaced this one`;
      if (!(await store.withdraw(id, at, request, [scheduled.event, ...progress], newest._id, reason)))
        await store.supersede(id, newest._id);
      return newest;
    }
    // Its Change Instance cancelled while the run started (docs/decisions/0055): looked up after
    // the insert, so a cancellation that marked the item's runs before it is seen here.
    const cancelled =
      item.change_instance_id === undefined
        ? null
        : await this.deps.items.cancellation(item.change_instance_id);
    if (cancelled) {
      const request = scheduled.fields.request_id!;
      await store.cancelStarted(id, at, request, [scheduled.event, ...progress], cancelled);
      return (await store.find(id)) ?? record;
    }
    return (await this.moves.waiting(record, at, scheduled.event, progress)) ?? record;
  }

  /** The item with its latest approved declaration, if the caller may see it (404 otherwise). */
  visibleItem(principal: Principal, serviceItemId: number): Promise<ServiceItemRecord> {
    return visibleItem(this.deps, principal, serviceItemId);
  }
}
