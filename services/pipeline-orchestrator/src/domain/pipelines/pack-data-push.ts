import { randomUUID } from 'node:crypto';
import { stringifyExactJson, type Envelope, type Principal, type Stage } from '@pack/contracts';
import { ConflictError } from '@pack/errors';
import { LOST_RACE, retryOnConflict } from '@pack/reliability';
import {
  NEXT_STAGE,
  type PipelineRecord,
  type RunOutcome,
  type ServiceItemRecord,
  type StageExpectation,
  type StageRecord,
  type StageState,
} from '../records/pipeline-records';
import { type PipelineStore } from '../records/store';
import { KIND_OF, laterProcessor } from '../records/stage-kinds';
import type { ActiveProcessors } from '../records/processor-records';
import { AI_PROCESSORS_OFF, AI_PROCESSORS_OFF_NOTE, type AiSwitches } from '../records/ai-switches';
import type { BudgetGate } from '../budgets/budgets';
import type { PipelineObserver } from '../stage-moves/pipeline-deps';
import type { Pipelines } from './pipelines';
import { withStages } from '../stage-moves/progress';
import { replacedPackData } from '../stage-moves/replaced-data';
import { draftPipeline } from '../stage-requests/stage-request';
import { cancelledConflict } from './cancellation';
import { pushedFields } from './pushed-stage';

export interface PackDataPushDeps {
  pipelines: Pipelines;
  store: PipelineStore;
  processors: ActiveProcessors;
  observer: PipelineObserver;
  switches: Pick<AiSwitches, 'processors'>;
  /** The Service's AI budget: spent, nothing starts (budgets.ts, docs/decisions/0046). */
  budget: BudgetGate;
}

export interface PushOutcome {
  /** The pipeline holding the pushed PackData (with the next stage started, when one was). */
  pipeline: PipelineRecord;
  /** The new run started from CONFIG by PackData pushed into EXECUTION, or null. */
  retrigger: PipelineRecord | null;
}

/** What a push that starts no next stage writes with its data: the run's end events and outcome, if it ends. */
interface PushEnd {
  events: Envelope[];
  ends: RunOutcome | null;
}

const ANY_STATE: readonly (StageState | null)[] = [null, 'SCHEDULED', 'WAITING_FOR_RESPONSE', 'OK', 'FAILED'];
const MAX_RACE_RETRIES = 5;

/**
 * How many new runs PackData pushed into EXECUTION (with `retrigger=true`) may start in a row
 * for one Change Instance; the next such push ends the run FAILED with the reason instead.
 */
export const MAX_PUSH_RETRIGGERS = 3;

export interface PushOptions {
  /**
   * Pushed into EXECUTION: start a new run from CONFIG with the pushed data in its context (spec
   * endpoint rule 4: "may retrigger the workflow"). Without it the push ends the run.
   */
  retrigger?: boolean;
}

/**
 * Endpoint 5 (spec endpoint rule 4, 3.1 rule 2): PackData from outside replaces the stage's
 * outcome in the item's latest run, as a new attempt (a late result of the processor's attempt
 * then changes nothing), and the next stage's active processor starts in the same write. Pushed
 * into EXECUTION it ends the run: COMPLETED, unless the caller asks for a retrigger, which
 * starts a new run from CONFIG (the pushed data, an outside test's errors say, in its execution
 * context), at most MAX_PUSH_RETRIGGERS times in a row; the next one ends the run FAILED.
 * While AI processors are switched off (`show_ai_processor`, 0040) the PackData is stored all the
 * same, but nothing starts: the next stage keeps the reason as its error, and a retrigger ends
 * the run FAILED with it, like one past the bound. While the Service's AI budget is spent (0046)
 * the data is stored, the next stage is recorded FAILED with `budget_exhausted` and the run ends
 * FAILED with that reason; a retrigger ends it FAILED with it too.
 */
export class PackDataPush {
  constructor(private readonly deps: PackDataPushDeps) {}

  async push(
    principal: Principal,
    serviceItemId: number,
    stage: Stage,
    data: Record<string, unknown>,
    options: PushOptions = {},
  ): Promise<PushOutcome> {
    const { pipelines, processors } = this.deps;
    const item = await pipelines.visibleItem(principal, serviceItemId);
    await pipelines.requireNotCancelled(item, `PackData pushed into ${stage}`);
    // Numbers digit for digit as sent (the route reads them exactly; docs/decisions/0039).
    const dataJson = stringifyExactJson(data);
    const next = NEXT_STAGE[stage];
    const nextProcessor = next && (await processors.active(item.service_id, KIND_OF[next]));
    // Pushed into EXECUTION: the run is over; asked for, a config processor starts a new one.
    const wantsRun = stage === 'EXECUTION' && options.retrigger === true;
    const config = wantsRun ? await processors.active(item.service_id, 'config') : null;
    if (wantsRun && !config)
      throw new ConflictError('the Service has no active config processor to retrigger the pipeline');
    const aiOn = this.deps.switches.processors();
    // Rule 2's next stage or the retrigger would start AI work: not while the budget is spent.
    const wouldStart = aiOn && ((next && nextProcessor) || config !== null);
    const spent = wouldStart ? await this.deps.budget.exhausted(item.service_id) : null;
    // A lost race (another trigger, result or push moved the stage first) decides again.
    return retryOnConflict(
      async () => {
        const latest = await this.latestRun(item);
        // Cancelled since the check above (the moves below expect the run not to be).
        if (latest.cancelled) throw cancelledConflict(item, `PackData pushed into ${stage}`);
        const now = new Date();
        const fields = pushedFields(latest.stages[stage], dataJson, now);
        const withData = withStages(latest, { [stage]: fields });
        const retriggers = latest.push_retriggers ?? 0;
        const bounded = config !== null && (!aiOn || spent !== null || retriggers >= MAX_PUSH_RETRIGGERS);
        // Conditional on the attempt read: a concurrent trigger, result or push makes us re-read.
        const expect = { states: ANY_STATE, attempt: latest.stages[stage].attempt, current: true };
        // The push replaces the stage's PackData (of the attempt read): it goes into the history first.
        const replaced = replacedPackData(latest, stage, now);
        if (replaced) await this.deps.store.savePackData(replaced);
        const note =
          next && nextProcessor && !aiOn && latest.stages[next].state === null
            ? { [next]: { error: AI_PROCESSORS_OFF_NOTE } }
            : {};
        // Budget spent: the next stage is recorded FAILED with the reason and the run ends (0046).
        const refused =
          next && nextProcessor && spent !== null
            ? { [next]: { state: 'FAILED' as const, error: spent, finished_at: now } }
            : null;
        const moved =
          next && nextProcessor && aiOn && !refused
            ? await pipelines.moves.start(
                withData,
                next,
                nextProcessor,
                { [stage]: fields },
                {
                  stage,
                  expect,
                  cost: null,
                  progress: true,
                },
              )
            : await this.stored(
                latest._id,
                stage,
                expect,
                { [stage]: fields, ...note, ...refused },
                refused
                  ? {
                      events: await pipelines.moves.finishing(withStages(withData, refused), 'FAILED', [
                        `${next}: ${spent}`,
                      ]),
                      ends: 'FAILED',
                    }
                  : await this.ending(withData, stage, config !== null, bounded, aiOn, spent),
              );
        if (!moved) return LOST_RACE;
        this.deps.observer.transition(stage, 'OK');
        await this.deps.store.savePackData({
          _id: `pipeline-${latest._id}-${stage}-${fields.attempt}-pushed`,
          pipeline_id: latest._id,
          service_item_id: serviceItemId,
          stage,
          data_json: dataJson,
          gen_ui_json: null,
          gen_ui_valid: null,
          created_at: now,
        });
        if (!config || bounded) return { pipeline: moved, retrigger: null };
        const origin = `push:${moved._id}:${stage}:${fields.attempt}`;
        const retrigger = await pipelines.startRun(item, config, origin, { push_retriggers: retriggers + 1 });
        return { pipeline: moved, retrigger };
      },
      {
        tries: 1 + MAX_RACE_RETRIES,
        keptChanging: () => new ConflictError(`the ${stage} stage keeps changing; try again`),
      },
    );
  }

  /** A push's write that starts no next stage: the data, and the run's end when it ends it. */
  private stored(
    id: number,
    stage: Stage,
    expect: StageExpectation,
    set: Partial<Record<Stage, Partial<StageRecord>>>,
    end: PushEnd,
  ) {
    return this.deps.store.move(id, stage, expect, set, end.events, null, false, end.ends);
  }

  /**
   * The end of a push that starts no next stage: the run ends COMPLETED (into EXECUTION, or
   * when no later stage has an active processor), or FAILED past the retrigger bound; a
   * retrigger within it ends nothing (the new run reports IN_PROGRESS).
   */
  private async ending(
    withData: PipelineRecord,
    stage: Stage,
    retrigger: boolean,
    bounded: boolean,
    aiOn: boolean,
    spent: string | null,
  ): Promise<PushEnd> {
    const { moves } = this.deps.pipelines;
    const completed = async (): Promise<PushEnd> => ({
      events: await moves.finishing(withData, 'COMPLETED', []),
      ends: 'COMPLETED',
    });
    const failed = async (reason: string): Promise<PushEnd> => ({
      events: await moves.finishing(withData, 'FAILED', [`EXECUTION: ${reason}`]),
      ends: 'FAILED',
    });
    // Into CONFIG or VERIFY with no next processor: the run ends unless a later stage has one
    // (it then waits for the next push, rule 2; docs/decisions/0026).
    if (stage !== 'EXECUTION') {
      const { processors } = this.deps;
      if (await laterProcessor(processors, withData.service_id, NEXT_STAGE[stage]!))
        return { events: [], ends: null };
      return completed();
    }
    if (!retrigger) return completed();
    if (!bounded) return { events: [], ends: null };
    if (!aiOn || spent !== null)
      return failed(
        `PackData pushed with retrigger=true, but the pipeline was not restarted: ${spent ?? AI_PROCESSORS_OFF}`,
      );
    return failed(
      `PackData pushed with retrigger=true has already restarted the pipeline ${MAX_PUSH_RETRIGGERS} times in a row (the most allowed); not restarted again, retrigger by hand to go on`,
    );
  }

  /**
   * The item's latest run, or a new one (no stage started) when it has none yet, or only a run of
   * a Change Instance that was cancelled before the item's current approval.
   */
  private async latestRun(item: ServiceItemRecord): Promise<PipelineRecord> {
    const { store } = this.deps;
    const latest = await store.latest(item.service_item_id);
    if (latest && !(latest.cancelled && latest.change_instance_id !== item.change_instance_id)) return latest;
    const draft = draftPipeline(await store.nextId(), item, `push:${randomUUID()}`, new Date());
    const record = { ...draft, run: await store.nextRun(item.service_item_id) };
    await store.insert(record, []);
    return record;
  }
}
