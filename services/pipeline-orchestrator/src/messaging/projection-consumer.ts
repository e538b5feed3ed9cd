import { on, type ConsumerSpec } from '@pack/broker';
import { events } from '@pack/contracts';
import type { ProjectionStore } from '../domain/processors/store';

export const PROJECTION_CONSUMER = 'pipeline-orchestrator.projections';

/**
 * Services (owners, tombstones) from the catalog and models from the llm-gateway. A Service's
 * tombstone also retires its processors (`retire`, on every delivery: it is idempotent).
 */
export function projectionConsumer(
  projections: ProjectionStore,
  retire: (serviceId: number) => Promise<unknown>,
): ConsumerSpec {
  return {
    name: PROJECTION_CONSUMER,
    handlers: [
      on(events.serviceChanged, async (snapshot) => {
        await projections.applyService(snapshot);
        if (snapshot.deleted) await retire(snapshot.service_id);
      }),
      on(events.llmModelChanged, async (snapshot) => {
        await projections.applyModel(snapshot);
      }),
    ],
  };
}
