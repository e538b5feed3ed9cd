/**
 * What the graceful-shutdown tests share: a confirmed burst of events, HTTP load. (They start
 * each service as its own process with the test kit's spawnService.)
 */
import type amqp from 'amqplib';
import { createEnvelope, type EventData, type EventDefinition } from '@pack/contracts';

/** Publishes events onto a namespace's exchange as another service would, and waits for the confirms. */
export async function publishAll<D extends EventDefinition>(
  channel: amqp.ConfirmChannel,
  namespace: string,
  definition: D,
  items: { data: EventData<D>; correlationId: string }[],
): Promise<void> {
  for (const { data, correlationId } of items) {
    const envelope = createEnvelope(definition, data, { source: 'test', correlationId });
    channel.publish(`${namespace}.events`, envelope.type, Buffer.from(JSON.stringify(envelope)), {
      persistent: true,
      messageId: envelope.id,
      type: envelope.type,
    });
  }
  await channel.waitForConfirms();
}

/** What became of one request of a load: its status, or the network error it met. */
export interface Outcome {
  status?: number;
  error?: string;
}

/**
 * `workers` clients sending `send()` one after the other until `stop()`: no request starts after
 * it, and every one started before it is in flight or done. Every outcome is kept.
 */
export function loadUntilStopped(workers: number, send: () => Promise<number>) {
  const outcomes: Outcome[] = [];
  let stopping = false;
  const worker = async () => {
    while (!stopping) {
      const outcome: Outcome = {};
      outcomes.push(outcome);
      try {
        outcome.status = await send();
      } catch {
        // A kept-alive socket the draining server closed as idle just as this request went out:
        // the server never read it. HTTP clients retry an idempotent request once on a fresh
        // connection then (RFC 9110 section 9.2.2); every request of these loads is a GET.
        try {
          outcome.status = await send();
        } catch (error) {
          if (refused(error))
            outcomes.splice(outcomes.indexOf(outcome), 1); // never accepted
          else outcome.error = (error as Error).message;
        }
      }
    }
  };
  const running = Promise.all(Array.from({ length: workers }, worker));
  return {
    outcomes,
    stop: async () => {
      stopping = true;
      await running;
    },
  };
}

/** The server no longer listens: the request was never accepted, so it was not in flight. */
function refused(error: unknown): boolean {
  const cause = (error as { cause?: { code?: string } }).cause;
  return cause?.code === 'ECONNREFUSED';
}
