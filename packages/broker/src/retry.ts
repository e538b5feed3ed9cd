import type { Channel, ConsumeMessage } from 'amqplib';
import type { Delivery } from './consumer';
import type { Publisher } from './publisher';

/** How many times a message was already handed back for a later try (kept across retries). */
const RETRY_HEADER = 'x-retry-count';

export function previousAttempts(message: ConsumeMessage): number {
  return Number(message.properties.headers?.[RETRY_HEADER] ?? 0);
}

/**
 * Puts a message on its consumer's retry queue (which dead-letters it back after a delay) with
 * the attempts so far, confirmed by the broker before the original is acknowledged (a nack is
 * tried again on a fresh channel, like every publish).
 */
export function sendForRetry(
  publisher: Publisher,
  retryQueue: string,
  message: ConsumeMessage,
  attempts: number,
): Promise<void> {
  return publisher.send((channel, done) =>
    channel.sendToQueue(
      retryQueue,
      message.content,
      {
        ...message.properties,
        persistent: true,
        headers: { ...message.properties.headers, [RETRY_HEADER]: attempts },
      },
      done,
    ),
  );
}

/** A delivery on `channel` as the settle logic sees it; `retryLater` publishes the copy. */
export function deliveryOf(
  channel: Channel,
  message: ConsumeMessage,
  retryLater: (attempts: number) => Promise<void>,
): Delivery {
  return {
    content: message.content,
    messageId: message.properties.messageId as string | undefined,
    previousAttempts: previousAttempts(message),
    ack: () => channel.ack(message),
    nack: (requeue) => channel.nack(message, false, requeue),
    retryLater,
  };
}
