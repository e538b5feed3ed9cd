import { type Stage } from '@pack/contracts';
import { runningStages, type PipelineRecord } from '../records/pipeline-records';
import type { SweepStore } from './store';

export type { SweepStore } from './store';

/** The contract default of an LLM model's timeout, for a model the projection does not know yet. */
export const DEFAULT_MODEL_TIMEOUT_SECONDS = 60;

/** Fails a running stage by the same conditional move as a generate result (Pipelines.failRunning). */
export interface StageFailer {
  failRunning(
    pipelineId: number,
    stage: Stage,
    requestId: string,
    error: string,
    now: Date,
  ): Promise<boolean>;
}

/** Sends a running stage's request again under its request id (stage-resend.ts). */
export interface StageResender {
  resend(pipelineId: number, stage: Stage, requestId: string, now: Date): Promise<boolean>;
}

export interface SweepObserver {
  swept(): void;
  timedOut(stage: Stage): void;
  resent?(stage: Stage): void;
}

export interface SweepOutcome {
  watched: number;
  failed: number;
  resent: number;
}

/**
 * What a stage may take before it is failed, and when its request is sent again. `callAttempts`
 * provider attempts (the llm-gateway: 3 per call, and a structured re-ask is a second call), each
 * up to the model's timeout plus `backoffMs` before it, plus `marginMs`. With no result for
 * `resendAfterMs` since it was sent, the request is sent again, at most `maxResends` times.
 */
export interface StageBudget {
  marginMs: number;
  callAttempts: number;
  backoffMs: number;
  resendAfterMs: number;
  maxResends: number;
}

/**
 * How long a stage of a model with this timeout may run before the sweeper fails it; with
 * fallbacks (the timeouts of the whole chain), every model's attempts are covered, one after the
 * other, and the margin once (docs/decisions/0045).
 */
export function stageDeadlineMs(budget: StageBudget, timeoutSeconds: number | readonly number[]): number {
  const chain = typeof timeoutSeconds === 'number' ? [timeoutSeconds] : timeoutSeconds;
  const calls = chain.reduce(
    (sum, seconds) => sum + budget.callAttempts * (seconds * 1000 + budget.backoffMs),
    0,
  );
  return calls + budget.marginMs;
}

/**
 * The stage timeout sweeper (docs/decisions/0028): a stage SCHEDULED or WAITING_FOR_RESPONSE
 * longer than every attempt its call may make (`stageDeadlineMs`) becomes FAILED; before that, a
 * stage with no result for `resendAfterMs` has its request sent again (bounded). Every replica
 * sweeps; the moves match the stage's request id in a running state, so a late result and any
 * number of sweepers fail or finish it once.
 */
export class StageSweeper {
  constructor(
    private readonly deps: {
      store: SweepStore;
      failer: StageFailer;
      resender?: StageResender;
      observer: SweepObserver;
      budget: StageBudget;
      pageSize?: number;
    },
  ) {}

  async sweep(now = new Date()): Promise<SweepOutcome> {
    const { store, budget } = this.deps;
    const pageSize = this.deps.pageSize ?? 200;
    const outcome: SweepOutcome = { watched: 0, failed: 0, resent: 0 };
    for (let after = 0; ;) {
      const page = await store.watched(after, pageSize);
      outcome.watched += page.length;
      const running = page.flatMap((pipeline) =>
        runningStages(pipeline).map((stage) => ({ pipeline, stage })),
      );
      const timeouts = await store.modelTimeouts([
        ...new Set(running.map(({ pipeline, stage }) => pipeline.stages[stage].processor_id!)),
      ]);
      for (const pipeline of page)
        if (runningStages(pipeline).length === 0) await store.unwatch(pipeline._id);
      for (const { pipeline, stage } of running) {
        const record = pipeline.stages[stage];
        const chain = timeouts.get(record.processor_id!) ?? [DEFAULT_MODEL_TIMEOUT_SECONDS];
        const startedAt = record.started_at?.getTime() ?? 0;
        if (now.getTime() <= startedAt + stageDeadlineMs(budget, chain)) {
          if (await this.resendIfQuiet(pipeline, stage, now)) outcome.resent += 1;
          continue;
        }
        const models =
          chain.length === 1
            ? `the model's ${chain[0]} s timeout`
            : `each of the ${chain.length} models' timeouts (${chain.map((s) => `${s} s`).join(', ')}; fallbacks included)`;
        const error =
          `timeout: no result within ${budget.callAttempts} attempt(s) of ${models} ` +
          `and ${budget.backoffMs / 1000} s backoff plus the ${budget.marginMs / 1000} s margin ` +
          `(state ${record.state})`;
        if (await this.deps.failer.failRunning(pipeline._id, stage, record.request_id!, error, now)) {
          outcome.failed += 1;
          this.deps.observer.timedOut(stage);
        }
      }
      if (page.length < pageSize) break;
      after = page[page.length - 1]!._id;
    }
    this.deps.observer.swept();
    return outcome;
  }

  /** Within its deadline, a stage quiet for `resendAfterMs` since its request last went out is sent again. */
  private async resendIfQuiet(pipeline: PipelineRecord, stage: Stage, now: Date): Promise<boolean> {
    const { resender, budget } = this.deps;
    const record = pipeline.stages[stage];
    const resends = record.resends ?? 0;
    if (!resender || resends >= budget.maxResends) return false;
    const sentAt = (record.resent_at ?? record.started_at)?.getTime() ?? 0;
    if (now.getTime() <= sentAt + budget.resendAfterMs) return false;
    if (!(await resender.resend(pipeline._id, stage, record.request_id!, now))) return false;
    this.deps.observer.resent?.(stage);
    return true;
  }
}
