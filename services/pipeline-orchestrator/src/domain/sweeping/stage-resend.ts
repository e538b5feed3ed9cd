import { randomUUID } from 'node:crypto';
import type { Stage } from '@pack/contracts';
import type { ProcessorRecord } from '../records/processor-records';
import { RUNNING_STATES, type StageState } from '../records/pipeline-records';
import type { PipelineDeps } from '../stage-moves/pipeline-deps';
import { inStageSpan, stageRequest } from '../stage-requests/stage-request';

/**
 * Sends a running stage's generate request again, under the same request id, when its result
 * has not come (the sweeper, docs/decisions/0028 "Crashes"). The llm-gateway's claim on the
 * request id makes a copy of a live call wait for it and a copy of a dead replica's call take it
 * over, so a stage still gets one result. The move that counts the copy writes it to the
 * pipeline's outbox and expects the pipeline's `rev`: of several sweepers, one sends it.
 */
export class StageResend {
  constructor(
    private readonly deps: Pick<PipelineDeps, 'store' | 'catalogSchema' | 'requests'> & {
      /** The processor a stage was started with (deactivated or deleted since included). */
      processor(id: number): Promise<ProcessorRecord | null>;
    },
  ) {}

  async resend(pipelineId: number, stage: Stage, requestId: string, now: Date): Promise<boolean> {
    const { store } = this.deps;
    const pipeline = await store.find(pipelineId);
    const current = pipeline?.stages[stage];
    if (!pipeline || !current || current.request_id !== requestId) return false;
    // A cancelled run makes no new call (docs/decisions/0055): the sweeper fails the stage in time.
    if (pipeline.cancelled !== undefined) return false;
    if (!RUNNING_STATES.includes(current.state as StageState) || current.processor_id === null) return false;
    const processor = await this.deps.processor(current.processor_id);
    if (!processor) return false;
    const resends = (current.resends ?? 0) + 1;
    // The copy continues the stage's trace (stored when it started), not the sweeper's timer.
    const { built } = inStageSpan('resend', pipeline, stage, processor, current.attempt, current.trace, () =>
      stageRequest(pipeline, stage, processor, this.deps.catalogSchema(), requestId, randomUUID(), resends),
    );
    const { event } = built;
    const moved = await store.move(
      pipelineId,
      stage,
      {
        states: RUNNING_STATES,
        request_id: requestId,
        ...(pipeline.rev !== undefined && { rev: pipeline.rev }),
      },
      { [stage]: { resends, resent_at: now } },
      [event],
      null,
    );
    if (!moved) return false;
    await this.deps.requests.publish(pipelineId, [event]);
    return true;
  }
}
