import { randomUUID } from 'node:crypto';
import type { Principal, Stage } from '@pack/contracts';
import { ConflictError } from '@pack/errors';
import {
  NEXT_STAGE,
  type PipelineRecord,
  type PipelineStore,
  type ServiceItemRecord,
  type StageRecord,
  type StageState,
} from './pipeline-model';
import { KIND_OF, type ActiveProcessors, type PipelineObserver, type Pipelines } from './pipelines';
import { withStages } from './progress';
import { draftPipeline } from './stage-request';

export interface PackDataPushDeps {
  pipelines: Pipelines;
  store: PipelineStore;
  processors: ActiveProcessors;
  observer: PipelineObserver;
}

export interface PushOutcome {
  /** The pipeline holding the pushed PackData (with the next stage started, when one was). */
  pipeline: PipelineRecord;
  /** The new run started from CONFIG by PackData pushed into EXECUTION, or null. */
  retrigger: PipelineRecord | null;
}

const ANY_STATE: readonly (StageState | null)[] = [null, 'SCHEDULED', 'WAITING_FOR_RESPONSE', 'OK', 'FAILED'];
const MAX_RACE_RETRIES = 5;

/**
 * Endpoint 5 (spec endpoint rule 4, 3.1 rule 2): PackData from outside replaces the stage's
 * outcome in the item's latest run, as a new attempt (a late result of the processor's attempt
 * then changes nothing), and the next stage's active processor starts in the same write. Pushed
 * into EXECUTION, it starts a new run from CONFIG when the Service has an active config
 * processor: the pushed data (an outside test's errors, say) is in that run's execution context.
 */
export class PackDataPush {
  constructor(private readonly deps: PackDataPushDeps) {}

  async push(
    principal: Principal,
    serviceItemId: number,
    stage: Stage,
    data: Record<string, unknown>,
  ): Promise<PushOutcome> {
    const { pipelines, processors } = this.deps;
    const item = await pipelines.visibleItem(principal, serviceItemId);
    const dataJson = JSON.stringify(data);
    const next = NEXT_STAGE[stage];
    const nextProcessor = next && (await processors.active(item.service_id, KIND_OF[next]));
    // Pushed into EXECUTION: the run is over, and a config processor reacts with a new run.
    const config = stage === 'EXECUTION' ? await processors.active(item.service_id, 'config') : null;
    for (let attempt = 0; attempt <= MAX_RACE_RETRIES; attempt += 1) {
      const latest = await this.latestRun(item);
      const now = new Date();
      const fields = pushedFields(latest.stages[stage], dataJson, now);
      const withData = withStages(latest, { [stage]: fields });
      // Conditional on the attempt read: a concurrent trigger, result or push makes us re-read.
      const expect = { states: ANY_STATE, attempt: latest.stages[stage].attempt };
      const moved =
        next && nextProcessor
          ? await pipelines.start(
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
          : await this.deps.store.move(
              latest._id,
              stage,
              expect,
              { [stage]: fields },
              stage === 'EXECUTION' && !config ? await pipelines.finishing(withData, 'COMPLETED', []) : [],
              null,
            );
      if (!moved) continue;
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
      const origin = `push:${moved._id}:${stage}:${fields.attempt}`;
      const retrigger = config && (await pipelines.startRun(item, config, origin));
      return { pipeline: moved, retrigger: retrigger ?? null };
    }
    throw new ConflictError(`the ${stage} stage keeps changing; try again`);
  }

  /** The item's latest run, or a new one (no stage started) when it has none yet. */
  private async latestRun(item: ServiceItemRecord): Promise<PipelineRecord> {
    const { store } = this.deps;
    const latest = await store.latest(item.service_item_id);
    if (latest) return latest;
    const draft = draftPipeline(await store.nextId(), item, `push:${randomUUID()}`, new Date());
    const record = { ...draft, run: await store.nextRun(item.service_item_id) };
    await store.insert(record, []);
    return record;
  }
}

/** A pushed stage: OK as a new attempt with no request out, so a late result of the old one is dropped. */
function pushedFields(
  current: StageRecord,
  dataJson: string,
  now: Date,
): Partial<StageRecord> & { attempt: number } {
  return {
    state: 'OK',
    origin: 'pushed',
    attempt: current.attempt + 1,
    request_id: null,
    processor_id: null,
    schema_mode: null,
    started_at: now,
    finished_at: now,
    error: null,
    cost: null,
    pack_data_json: dataJson,
    gen_ui_json: null,
    gen_ui_valid: null,
  };
}
