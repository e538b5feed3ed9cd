import { on, RetryLater, type ConsumerSpec } from '@pack/broker';
import { events } from '@pack/contracts';
import type { Generation } from '../domain/generation';

export const GENERATE_CONSUMER = 'llm-gateway.generate-requests';

/**
 * Generate requests, shared by every replica (competing consumers). The message is acknowledged
 * only after the result was published with a broker confirm, so a redelivered request is the
 * outbox of its result: the generation answers it from the finished call record.
 */
export function generateConsumer(generation: Generation, prefetch: number): ConsumerSpec {
  return {
    name: GENERATE_CONSUMER,
    prefetch,
    // Publishing a result can fail while the broker is away; the retries wait for it to return.
    maxAttempts: 20,
    retryDelayMs: 1000,
    handlers: [
      on(events.llmGenerateRequested, async (request) => {
        const handled = await generation.handle(request);
        if (handled === 'held')
          throw new RetryLater(`request ${request.request_id} is held by another replica`);
      }),
    ],
  };
}
