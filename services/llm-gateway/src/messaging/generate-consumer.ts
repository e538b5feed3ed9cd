import { on, RetryLater, type Broker, type ConsumerSpec } from '@pack/broker';
import { createEnvelope, events, generateResultEvent } from '@pack/contracts';
import { currentContext } from '@pack/logging';
import type { GenerateResult } from '../domain/calls/calls';
import type { Generation } from '../domain/generation/generation';

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

/** Publishes a generation's result (with a broker confirm); the same event id on every republish. */
export function resultPublisher(broker: Broker, source: string) {
  return (result: GenerateResult): Promise<void> =>
    broker.publish(
      // Each kind of result on its own routing key: its requester's queue alone receives it.
      createEnvelope(generateResultEvent(result.reply_kind), result, {
        source,
        // The same id on every republish: consumers that dedupe by event id drop repeats too.
        id: `llm-result-${result.request_id}`,
        correlationId: currentContext()?.correlationId ?? result.request_id,
      }),
    );
}
