import { on, type ConsumerSpec } from '@pack/broker';
import { events, PROCESSOR_EVENTS, type ProcessorSnapshot } from '@pack/contracts';
import type { ModelUsageStore } from '../domain/models/store';

export const PROCESSOR_CONSUMER = 'llm-gateway.processors';

/**
 * The pipeline orchestrator's processor events, kept as a projection of which models active
 * processors use (the 409 on deleting a used model), and the catalog's Service events (who owns
 * a processor's Service: the dashboard's scope). Every event carries the whole snapshot with a
 * version, so applying it is idempotent without a processed-events marker.
 */
export function processorConsumer(usage: ModelUsageStore): ConsumerSpec {
  return {
    name: PROCESSOR_CONSUMER,
    handlers: [
      ...PROCESSOR_EVENTS.map((event) => on(event, (snapshot: ProcessorSnapshot) => usage.apply(snapshot))),
      on(events.serviceChanged, (snapshot) => usage.applyService(snapshot)),
    ],
  };
}
