import { on, type ConsumerSpec } from '@pack/broker';
import { PROCESSOR_EVENTS } from '@pack/contracts';
import type { ProcessorCache } from '../domain/processors/processor-cache';

export const PROCESSOR_CACHE_CONSUMER = 'pipeline-orchestrator.processor-cache';

/**
 * Every replica hears every processor change (its own queue), so a lookup remembered by one
 * replica is forgotten when another changes a processor of that Service.
 */
export function processorCacheConsumer(cache: ProcessorCache): ConsumerSpec {
  return {
    name: PROCESSOR_CACHE_CONSUMER,
    broadcast: true,
    handlers: PROCESSOR_EVENTS.map((event) =>
      on(event, async (snapshot) => {
        cache.forget(snapshot.service_id);
      }),
    ),
  };
}
