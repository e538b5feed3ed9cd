import type { Connection } from 'mongoose';
import type { Envelope } from '@pack/contracts';

const PROCESSED = 'processed_events';

/**
 * Wraps a consumer handler so that an event delivered twice (at-least-once delivery, or two
 * relays publishing the same outbox entry) is handled once. The marker is written after the
 * handler succeeds, so handlers must still be safe to re-run after a crash between the two.
 */
export function idempotent(
  connection: Connection,
  consumer: string,
  handler: (envelope: Envelope) => Promise<void>,
): (envelope: Envelope) => Promise<void> {
  const markers = connection.collection<{ _id: string; at: Date }>(PROCESSED);
  return async (envelope) => {
    const key = `${consumer}:${envelope.id}`;
    if (await markers.findOne({ _id: key }, { projection: { _id: 1 } })) return;
    await handler(envelope);
    await markers.updateOne({ _id: key }, { $setOnInsert: { at: new Date() } }, { upsert: true });
  };
}
