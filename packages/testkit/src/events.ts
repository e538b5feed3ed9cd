import type { Channel, ChannelModel } from 'amqplib';
import { AMQP_SOCKET_OPTIONS, connectAny, topologyNames } from '@pack/broker';
import { createEnvelope, type Envelope, type EventData, type EventDefinition } from '@pack/contracts';
import { waitFor } from './waiting';

/** An event as the tap received it: the envelope, and the message text for checks on what went over the wire. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read the payload by field name
export type TappedEvent = Envelope<any> & { raw: string };

/**
 * A queue of the test's own on a broker namespace's event exchange: it sees exactly what the
 * services published, from the moment it started. Read with `drain()` once the publishers'
 * outboxes are empty (see `outboxDrained`), or wait for an event with `waitFor`.
 */
export class EventTap {
  private readonly received: TappedEvent[] = [];

  private constructor(
    private readonly connection: ChannelModel,
    private readonly channel: Channel,
    private readonly queue: string,
  ) {}

  /** Binds to the routing-key patterns given (every event by default). */
  static async start(
    amqpUrl: string,
    namespace: string,
    patterns: readonly string[] = ['#'],
  ): Promise<EventTap> {
    const connection = await connectAny(amqpUrl, AMQP_SOCKET_OPTIONS);
    const channel = await connection.createChannel();
    const exchange = topologyNames(namespace).events;
    await channel.assertExchange(exchange, 'topic', { durable: true });
    const { queue } = await channel.assertQueue('', { exclusive: true, autoDelete: true });
    for (const pattern of patterns) await channel.bindQueue(queue, exchange, pattern);
    return new EventTap(connection, channel, queue);
  }

  /** Every event received so far, in arrival order (the queue is read until empty). */
  async drain(): Promise<TappedEvent[]> {
    for (;;) {
      const message = await this.channel.get(this.queue, { noAck: true });
      if (!message) return [...this.received];
      const raw = message.content.toString('utf8');
      this.received.push({ ...(JSON.parse(raw) as Envelope), raw });
    }
  }

  /** Waits until the events received so far satisfy `done`, and returns them. */
  async waitFor(done: (events: TappedEvent[]) => boolean, what = 'events'): Promise<TappedEvent[]> {
    return waitFor(
      async () => {
        const events = await this.drain();
        return done(events) ? events : undefined;
      },
      { what },
    );
  }

  async stop(): Promise<void> {
    await this.connection.close().catch(() => undefined);
  }
}

/** Publishes an event onto a namespace's exchange with a confirm, as another service would. */
export async function publishEvent<D extends EventDefinition>(
  amqpUrl: string,
  namespace: string,
  definition: D,
  data: EventData<D>,
  /** An id of an event published before: a redelivery, as at-least-once delivery may make. */
  id?: string,
): Promise<string> {
  const envelope = createEnvelope(definition, data, { source: 'test', correlationId: 'test', id });
  const connection = await connectAny(amqpUrl, AMQP_SOCKET_OPTIONS);
  try {
    const channel = await connection.createConfirmChannel();
    const exchange = topologyNames(namespace).events;
    await channel.assertExchange(exchange, 'topic', { durable: true });
    channel.publish(exchange, envelope.type, Buffer.from(JSON.stringify(envelope)), {
      persistent: true,
      messageId: envelope.id,
      contentType: 'application/cloudevents+json',
    });
    await channel.waitForConfirms();
  } finally {
    await connection.close();
  }
  return envelope.id;
}
