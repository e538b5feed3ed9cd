import { randomUUID } from 'node:crypto';
import type { Envelope, Stage } from '@pack/contracts';
import type { ProcessorRecord } from '../records/processor-records';
import { scheduleStage } from '../stage-requests/stage-request';
import type { PipelineDeps } from './pipeline-deps';
import type {
  PipelineRecord,
  RunOutcome,
  StageExpectation,
  StageRecord,
  StageState,
} from '../records/pipeline-records';
import { progressEvents, withStages } from './progress';
import { replacedPackData } from './replaced-data';

const STARTABLE: (StageState | null)[] = [null, 'OK', 'FAILED'];

/**
 * The moves of a pipeline's stages, shared by everything that moves one: triggers and new runs
 * (pipelines.ts), generate results (stage-results/), pushed PackData (pack-data-push.ts) and the
 * sweeper (through Pipelines.failRunning). Every move is one conditional update on the stage's
 * current state (and attempt or request id), so a redelivered or late generate result, a
 * repeated trigger or a redelivered approval cannot move a stage twice (docs/decisions/0024).
 */
export class StageMoves {
  constructor(private readonly deps: PipelineDeps) {}

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
    // The new attempt clears the stage's PackData: it goes into the history first. The move then
    // expects the stage at the attempt read, whose PackData this is.
    const replaced = replacedPackData(pipeline, stage, now);
    if (replaced) await this.deps.store.savePackData(replaced);
    const attempt = pipeline.stages[stage].attempt;
    const moved = await this.deps.store.move(
      pipeline._id,
      on?.stage ?? stage,
      // A trigger starts no stage in a superseded or cancelled run (`current`).
      on ? { ...on.expect, others: { [stage]: attempt } } : { states: STARTABLE, attempt, current: true },
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
   * SCHEDULED -> WAITING_FOR_RESPONSE once the request and the move's other events are sent
   * (published at once, the outbox relay as the fallback, docs/decisions/0028); a result that
   * came first wins.
   */
  async waiting(pipeline: PipelineRecord, stage: Stage, request: Envelope, others: Envelope[]) {
    const moved = await this.deps.requests.send(pipeline._id, stage, request, [request, ...others]);
    if (moved) this.deps.observer.transition(stage, 'WAITING_FOR_RESPONSE');
    return moved;
  }

  /**
   * A stage's last move of a run (FAILED, or OK with no next stage started), with the run's end
   * events; `ends`, the run's outcome when the move ends it (null: the run waits, or nobody's news).
   */
  async endMove(
    pipelineId: number,
    stage: Stage,
    expect: StageExpectation,
    fields: Partial<StageRecord>,
    events: Envelope[],
    cost: string | null,
    unpriced = false,
    ends: RunOutcome | null = null,
  ) {
    const moved = await this.deps.store.move(
      pipelineId,
      stage,
      expect,
      { [stage]: fields },
      events,
      cost,
      unpriced,
      ends,
    );
    if (moved) await this.deps.requests.publishEnd(pipelineId, events);
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
    return this.deps.finishing(pipeline, outcome, reasons, optimizer);
  }

  /** Counts a stage's end (transition and duration). */
  ended(stage: Stage, state: 'OK' | 'FAILED', before: StageRecord, now: Date): void {
    this.deps.observer.transition(stage, state);
    const seconds = before.started_at ? (now.getTime() - before.started_at.getTime()) / 1000 : 0;
    this.deps.observer.finished(stage, state === 'OK' ? 'ok' : 'failed', seconds);
  }
}
