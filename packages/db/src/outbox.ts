import { ConnectionStates, type Connection } from 'mongoose';
import type { Broker } from '@pack/broker';
import type { Envelope } from '@pack/contracts';
import type { Logger } from '@pack/logging';
import { contextOf, inSpan, SpanKind } from '@pack/tracing';
import type { Metrics } from '@pack/metrics';
import { oneBatch } from './batches';

/**
 * The transactional outbox without transactions (FerretDB v1 has none).
 *
 * A change and its event are written by the SAME single-document update: the update `$push`es
 * the event into the document's own `_outbox` array and sets the indexed `_outbox_pending`
 * flag. The relay publishes each pending event with a broker confirm, then removes exactly that
 * event with an exact-value `$pull` and clears the flag once the array is empty. A crash or a
 * broker outage between the write and the publish leaves the event in the document, where the
 * sweep (at start, on an interval and when the broker comes back) finds it. Delivery is
 * therefore at least once; consumers de-duplicate by event id.
 *
 * Events with no owning document go into the `outbox` collection, where the insert is the change.
 *
 * The relay's `$pull` and a domain update of the same document at that moment both survive:
 * single-document updates are atomic on MongoDB and on our FerretDB build (decision 0002; stock
 * FerretDB v1 would let one undo the other). So an outbox may live on a document the domain
 * updates in place, as well as on change records that are inserted once with their events.
 */
export const OUTBOX_FIELD = '_outbox';
export const OUTBOX_PENDING_FIELD = '_outbox_pending';
export const OUTBOX_COLLECTION = 'outbox';

/** The update fragment that records events with a change. Merge it into the domain update. */
export function withOutbox(
  update: Record<string, unknown>,
  ...envelopes: Envelope[]
): Record<string, unknown> {
  const set = (update.$set as Record<string, unknown> | undefined) ?? {};
  const push = (update.$push as Record<string, unknown> | undefined) ?? {};
  return {
    ...update,
    $set: { ...set, [OUTBOX_PENDING_FIELD]: true },
    $push: { ...push, [OUTBOX_FIELD]: envelopes.length === 1 ? envelopes[0] : { $each: envelopes } },
  };
}

/** Fields for a document inserted together with its events. */
export function outboxFields(...envelopes: Envelope[]) {
  return { [OUTBOX_FIELD]: envelopes, [OUTBOX_PENDING_FIELD]: envelopes.length > 0 };
}

/** Mongoose schema paths for a collection that carries an outbox. */
export const outboxSchemaFields = {
  [OUTBOX_FIELD]: { type: [Object], default: [], select: false },
  [OUTBOX_PENDING_FIELD]: { type: Boolean, default: false, index: true, select: false },
};

/**
 * Work the relay does on a document before it publishes the document's events, every time it
 * meets the document with events pending (after a crash of the writer too): the place for a
 * follow-up write of the change that must not be lost with the writer. It must be idempotent;
 * a throw leaves the events pending, and the next drain tries again.
 */
export interface OutboxDocumentStep {
  /** Fields of the document the step reads (besides `_id`). */
  fields: readonly string[];
  run(document: Record<string, unknown>): Promise<void>;
}

export interface OutboxRelayOptions {
  connection: Connection;
  broker: Broker;
  logger: Logger;
  metrics: Metrics;
  /** Collections whose documents carry `_outbox` arrays. */
  collections: readonly string[];
  sweepIntervalMs?: number;
  batchSize?: number;
}

export class OutboxRelay {
  private timer?: NodeJS.Timeout;
  private draining?: Promise<void>;
  private again = false;
  private stopped = false;
  private unsubscribe?: () => void;
  private readonly relayed;
  private readonly pendingFailures;
  private readonly steps = new Map<string, OutboxDocumentStep>();

  constructor(private readonly options: OutboxRelayOptions) {
    this.relayed = options.metrics.counter('outbox_relayed_total', 'Outbox events published and removed', [
      'type',
    ]);
    this.pendingFailures = options.metrics.counter(
      'outbox_publish_failures_total',
      'Outbox publishes that failed and stay pending',
    );
  }

  /** Runs `step` on each document of `collection` before its events are published (one per collection). */
  beforePublishing(collection: string, step: OutboxDocumentStep): void {
    this.steps.set(collection, step);
  }

  start(): void {
    this.stopped = false;
    this.unsubscribe = this.options.broker.onReady(() => this.kick());
    const interval = this.options.sweepIntervalMs ?? 5000;
    this.timer = setInterval(() => this.kick(), interval);
    this.timer.unref();
    this.kick();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    this.unsubscribe?.();
    await this.draining;
  }

  /** Records an event with no owning document; the insert is the change itself. */
  async insert(envelope: Envelope): Promise<void> {
    await this.options.connection
      .collection(OUTBOX_COLLECTION)
      .insertOne({ _id: envelope.id as never, envelope, created_at: new Date() });
    this.kick();
  }

  /** Drains soon; calls during a drain schedule one more pass, so nothing written is missed. */
  kick(): void {
    if (this.stopped) return;
    if (this.draining) {
      this.again = true;
      return;
    }
    this.draining = this.drain()
      .catch((error: unknown) => this.options.logger.warn({ err: error }, 'outbox drain failed'))
      .finally(() => {
        this.draining = undefined;
        if (this.again) {
          this.again = false;
          this.kick();
        }
      });
  }

  /** Resolves once everything pending now has been published (tests and shutdown use it). */
  async flush(): Promise<void> {
    this.kick();
    while (this.draining) await this.draining;
  }

  private async drain(): Promise<void> {
    if (!this.options.broker.isReady() || this.options.connection.readyState !== ConnectionStates.connected)
      return;
    const batch = this.options.batchSize ?? 100;
    for (const name of this.options.collections) {
      const collection = this.options.connection.collection(name);
      const step = this.steps.get(name);
      const projection = Object.fromEntries([OUTBOX_FIELD, ...(step?.fields ?? [])].map((f) => [f, 1]));
      const documents = await collection
        .find({ [OUTBOX_PENDING_FIELD]: true }, { projection, limit: batch, ...oneBatch(batch) })
        .toArray();
      for (const document of documents) {
        await step?.run(document);
        const events = (document[OUTBOX_FIELD] as Envelope[] | undefined) ?? [];
        for (const event of events) {
          if (!(await this.publish(event))) return;
          await collection.updateOne({ _id: document._id }, { $pull: { [OUTBOX_FIELD]: event } as never });
        }
        await collection.updateOne(
          { _id: document._id, [OUTBOX_FIELD]: { $size: 0 } },
          { $set: { [OUTBOX_PENDING_FIELD]: false } },
        );
      }
    }
    const standalone = this.options.connection.collection<{ _id: string; envelope: Envelope }>(
      OUTBOX_COLLECTION,
    );
    const records = await standalone
      .find({}, { sort: { created_at: 1 }, limit: batch, ...oneBatch(batch) })
      .toArray();
    for (const record of records) {
      if (!(await this.publish(record.envelope))) return;
      await standalone.deleteOne({ _id: record._id });
    }
  }

  private async publish(event: Envelope): Promise<boolean> {
    try {
      // The relay continues the trace of the write that made the event (its traceparent, stored
      // in the outbox with it), not the relay's timer.
      await inSpan(
        'outbox relay',
        {
          kind: SpanKind.INTERNAL,
          parent: contextOf(event),
          attributes: {
            'messaging.message.id': event.id,
            'cloudevents.event_type': event.type,
            'pack.outbox.wait_ms': Math.max(0, Date.now() - Date.parse(event.time)),
          },
        },
        () => this.options.broker.publish(event),
      );
      this.relayed.inc({ type: event.type });
      return true;
    } catch (error) {
      this.pendingFailures.inc();
      this.options.logger.warn(
        { err: error, event_id: event.id, type: event.type },
        'outbox publish failed; event stays pending',
      );
      return false;
    }
  }
}
