import { on, type ConsumerSpec } from '@pack/broker';
import { events } from '@pack/contracts';
import type { Pipelines } from '../domain/pipelines/pipelines';

export const PIPELINE_CONSUMER = 'pipeline-orchestrator.pipelines';

/**
 * Approvals (rule 6, the items' latest approved declarations) and generate results. Both are
 * idempotent without markers: a repeated approval collides on the pipeline's unique origin, a
 * repeated result finds its stage moved on (docs/decisions/0024).
 */
export function pipelineConsumer(pipelines: Pipelines): ConsumerSpec {
  return {
    name: PIPELINE_CONSUMER,
    handlers: [
      on(events.changeInstanceCreated, (data) => pipelines.changeInstance(data)),
      on(events.changeInstanceStateChanged, (data) => pipelines.changeInstance(data)),
      on(events.llmGenerateCompleted, (data) => pipelines.result(data)),
    ],
  };
}
