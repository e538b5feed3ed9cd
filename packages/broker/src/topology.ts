import type { Channel } from 'amqplib';

/** Names of everything the broker declares, derived from one namespace so tests never collide. */
export function topologyNames(namespace: string) {
  return {
    events: `${namespace}.events`,
    deadLetters: `${namespace}.dlx`,
    queue: (consumer: string) => `${namespace}.${consumer}`,
    retryQueue: (consumer: string) => `${namespace}.${consumer}.retry`,
    deadLetterQueue: (consumer: string) => `${namespace}.${consumer}.dlq`,
  };
}

type Names = ReturnType<typeof topologyNames>;

/** A shared consumer's quorum queue, its delayed-retry queue and its dead-letter queue. */
export async function declareQueues(
  channel: Channel,
  names: Names,
  consumer: string,
  options: { deliveryLimit: number; retryDelayMs: number },
): Promise<string> {
  const queue = names.queue(consumer);
  const deadLetterQueue = names.deadLetterQueue(consumer);
  await channel.assertQueue(deadLetterQueue, { durable: true, arguments: { 'x-queue-type': 'quorum' } });
  await channel.bindQueue(deadLetterQueue, names.deadLetters, deadLetterQueue);
  await channel.assertQueue(queue, {
    durable: true,
    arguments: {
      'x-queue-type': 'quorum',
      'x-delivery-limit': options.deliveryLimit,
      'x-dead-letter-exchange': names.deadLetters,
      'x-dead-letter-routing-key': deadLetterQueue,
    },
  });
  // Delayed retry: a message waits here for the TTL, then dead-letters back onto the main queue.
  await channel.assertQueue(names.retryQueue(consumer), {
    durable: true,
    arguments: {
      'x-message-ttl': options.retryDelayMs,
      'x-dead-letter-exchange': '',
      'x-dead-letter-routing-key': queue,
    },
  });
  return queue;
}

/** A broadcast consumer's queue: this connection's own, gone with it. */
export async function declareBroadcastQueue(
  channel: Channel,
  names: Names,
  consumer: string,
  instanceId: string,
): Promise<string> {
  const queue = `${names.queue(consumer)}.${instanceId}`;
  await channel.assertQueue(queue, { exclusive: true, autoDelete: true, durable: false });
  return queue;
}
