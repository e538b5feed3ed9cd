import type { Connection } from 'mongoose';
import type { Envelope, OncePerEvent } from '@pack/contracts';

/** Where `idempotent()` records handled events; `sweepProcessedEvents` keeps it bounded. */
export const PROCESSED_EVENTS = 'processed_events';

/** A marker: `_id` is `<consumer>:<event id>`, `at` when the handler finished. */
export interface ProcessedEvent {
  _id: string;
  at: Date;
}

/**
 * Wraps a consumer handler so that an event delivered twice (at-least-once delivery, or two
 * relays publishing the same outbox entry) is handled once. The marker is written after the
 * handler succeeds, so handlers must still be safe to re-run after a crash between the two.
 * Markers live for the retention of the processed-events sweep: a copy of an event redelivered
 * later than that is handled again.
 */
export function idempotent<T>(
  connection: Connection,
  consumer: string,
  handler: (data: T, envelope: Envelope<T>) => Promise<void>,
): (data: T, envelope: Envelope<T>) => Promise<void> {
  const markers = connection.collection<ProcessedEvent>(PROCESSED_EVENTS);
  return async (data, envelope) => {
    const key = `${consumer}:${envelope.id}`;
    if (await markers.findOne({ _id: key }, { projection: { _id: 1 } })) return;
    await handler(data, envelope);
    await markers.updateOne({ _id: key }, { $setOnInsert: { at: new Date() } }, { upsert: true });
  };
}

/** `idempotent` on this connection: the OncePerEvent a service's wiring hands its consumers. */
export function oncePerEvent(connection: Connection): OncePerEvent {
  return (consumer, handler) => idempotent(connection, consumer, handler);
}
