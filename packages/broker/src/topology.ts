import type { Channel } from 'amqplib';
import { eventTypes, type ConsumerSpec } from './consumer';

/**
 * Socket options for every AMQP connection. Nagle's algorithm off: a publish is several frames
 * written one after another, and with Nagle on the later frames wait for the broker's delayed
 * ACK of the first, about 40 ms per confirmed publish on a quiet connection (measured here: a
 * quorum-queue publish with confirm took 44 ms p50 with Nagle, 0.7 ms without).
 */
export const AMQP_SOCKET_OPTIONS = { noDelay: true } as const;

/** Names of everything the broker declares, derived from one namespace so tests never collide. */
export function topologyNames(namespace: string) {
  return {
    events: `${namespace}.events`,
    deadLetters: `${namespace}.dlx`,
    queue: (consumer: string) => `${namespace}.${consumer}`,
    /**
     * A quorum queue, like the others, so that it survives the loss of a cluster node. Versions
     * before decision 0049 had a classic queue named `.retry`; a queue cannot change its type,
     * hence the new name (the old queue still dead-letters what it holds back, then stays empty).
     */
    retryQueue: (consumer: string) => `${namespace}.${consumer}.retries`,
    deadLetterQueue: (consumer: string) => `${namespace}.${consumer}.dlq`,
  };
}

type Names = ReturnType<typeof topologyNames>;

/** The queues declared for these consumers: each shared one's queue, retry queue and dead-letter queue. */
export function consumerQueueNames(names: Names, consumers: readonly ConsumerSpec[]): string[] {
  return consumers
    .filter((spec) => !spec.broadcast)
    .flatMap((spec) => [
      names.queue(spec.name),
      names.retryQueue(spec.name),
      names.deadLetterQueue(spec.name),
    ]);
}

/**
 * A shared consumer's quorum queue, its delayed-retry queue and its dead-letter queue, all three
 * quorum queues: on a cluster each has a replica on every node (no `x-quorum-initial-group-size`,
 * whose default is every node; adding it now would make redeclaring existing queues fail).
 */
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
      'x-queue-type': 'quorum',
      'x-message-ttl': options.retryDelayMs,
      'x-dead-letter-exchange': '',
      'x-dead-letter-routing-key': queue,
    },
  });
  return queue;
}

/** A broadcast consumer's queue: this connection's own (`instanceId` names the connection), gone with it. */
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

/**
 * A consumer's queue (its own broadcast queue, or the shared one with its retry and dead-letter
 * queues), bound to each event type it takes and unbound from those it `retired`.
 */
export async function declareConsumerQueue(
  channel: Channel,
  names: ReturnType<typeof topologyNames>,
  spec: ConsumerSpec,
  options: { instanceId: string; deliveryLimit: number },
): Promise<string> {
  const queue = spec.broadcast
    ? await declareBroadcastQueue(channel, names, spec.name, options.instanceId)
    : await declareQueues(channel, names, spec.name, {
        deliveryLimit: options.deliveryLimit,
        retryDelayMs: spec.retryDelayMs ?? 1000,
      });
  for (const type of eventTypes(spec)) await channel.bindQueue(queue, names.events, type);
  for (const { event } of spec.retired ?? []) await channel.unbindQueue(queue, names.events, event.type);
  return queue;
}
