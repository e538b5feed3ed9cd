import { on, type ConsumerSpec } from '@pack/broker';
import { events } from '@pack/contracts';
import type { Projections } from '../domain/projections';

export const PROJECTION_CONSUMER = 'pipeline-orchestrator.projections';

/** Services (owners, tombstones) from the catalog and models from the llm-gateway. */
export function projectionConsumer(projections: Projections): ConsumerSpec {
  return {
    name: PROJECTION_CONSUMER,
    handlers: [
      on(events.serviceChanged, async (snapshot) => {
        await projections.applyService(snapshot);
      }),
      on(events.llmModelChanged, async (snapshot) => {
        await projections.applyModel(snapshot);
      }),
    ],
  };
}
