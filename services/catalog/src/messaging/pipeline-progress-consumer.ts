import { on, type ConsumerSpec } from '@pack/broker';
import { events } from '@pack/contracts';
import type { PipelineProgress } from '../domain/change-instances/pipeline-progress';

export const PIPELINE_PROGRESS_CONSUMER = 'catalog.pipeline-progress';

/**
 * Pipeline progress moves Change Instances (docs/decisions/0026). No processed-events marker:
 * each progress carries a version kept with the instance, so a repeat or a late event is stale.
 */
export function pipelineProgressConsumer(progress: PipelineProgress): ConsumerSpec {
  return {
    name: PIPELINE_PROGRESS_CONSUMER,
    // One at a time, in order: progress is rare, and a late event is then simply older.
    prefetch: 1,
    handlers: [
      on(events.pipelineProgress, async (data) => {
        await progress.apply(data);
      }),
    ],
  };
}
