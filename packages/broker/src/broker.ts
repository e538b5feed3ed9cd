import { randomUUID } from 'node:crypto';
import amqp, { type Channel, type ChannelModel, type ConfirmChannel, type ConsumeMessage } from 'amqplib';
import { parseEnvelope, type Envelope, type EventDefinition } from '@pack/contracts';
import { currentContext, runWithContext, type Logger } from '@pack/logging';
import type { Metrics } from '@pack/metrics';
import { topologyNames } from './topology';

export interface ConsumerSpec {
  /** Unique per service and purpose, e.g. `webhook-dispatcher.change-instances`; names the queue. */
  name: string;
  events: readonly EventDefinition[];
  handler: (envelope: Envelope) => Promise<void>;
  prefetch?: number;
  /** Handler attempts before the message goes to the dead-letter queue. */
  maxAttempts?: number;
  retryDelayMs?: number;
  /**
   * Every replica gets every event (cache invalidation), instead of replicas sharing the work.
   * The queue belongs to this connection and disappears with it; a failed handler is logged and
   * the message dropped (such consumers must have another way to catch up, e.g. a periodic fetch).
   */
  broadcast?: boolean;
}

export interface BrokerOptions {
  url: string;
  namespace: string;
  service: string;
  logger: Logger;
  metrics: Metrics;
  publishTimeoutMs?: number;
  /** Quorum-queue redelivery limit: a message that keeps crashing its consumer is dead-lettered. */
  deliveryLimit?: number;
}

export class BrokerUnavailableError extends Error {
  constructor(message = 'message broker is not connected') {
    super(message);
    this.name = 'BrokerUnavailableError';
  }
}

const RETRY_HEADER = 'x-retry-count';

export class Broker {
  private connection?: ChannelModel;
  private publishChannel?: ConfirmChannel;
  private consumerChannels: Channel[] = [];
  private readonly consumers: ConsumerSpec[] = [];
  private ready = false;
  private closing = false;
  private reconnectTimer?: NodeJS.Timeout;
  private attempt = 0;
  private inFlight = 0;
  private readonly names: ReturnType<typeof topologyNames>;
  private readonly instanceId = randomUUID().slice(0, 8);
  private readonly readyListeners = new Set<() => void>();
  private readonly published;
  private readonly consumed;
  private readonly connectedGauge;

  constructor(private readonly options: BrokerOptions) {
    this.names = topologyNames(options.namespace);
    this.published = options.metrics.counter(
      'broker_published_total',
      'Events published with a broker confirm',
      ['type', 'outcome'],
    );
    this.consumed = options.metrics.counter('broker_consumed_total', 'Messages handled by consumers', [
      'queue',
      'outcome',
    ]);
    this.connectedGauge = options.metrics.gauge(
      'broker_connected',
      '1 when the broker connection and topology are up',
    );
  }

  /** Registers a consumer; it starts now if connected, and again after every reconnect. */
  consume(spec: ConsumerSpec): void {
    this.consumers.push(spec);
    if (this.ready && this.connection)
      void this.startConsumer(this.connection, spec).catch((error) => this.fail(error));
  }

  /** Connects in the background, retrying with backoff; never throws. */
  start(): void {
    this.closing = false;
    void this.connect();
  }

  isReady(): boolean {
    return this.ready;
  }

  /** Every queue this broker declares (tests delete them afterwards). */
  declaredQueues(): string[] {
    return this.consumers
      .filter((spec) => !spec.broadcast)
      .flatMap((spec) => [
        this.names.queue(spec.name),
        this.names.retryQueue(spec.name),
        this.names.deadLetterQueue(spec.name),
      ]);
  }

  /** Calls `listener` each time the broker becomes ready (the outbox relay drains then). */
  onReady(listener: () => void): () => void {
    this.readyListeners.add(listener);
    return () => this.readyListeners.delete(listener);
  }

  /** Publishes persistently and resolves only once the broker has confirmed it. */
  async publish(envelope: Envelope): Promise<void> {
    const channel = this.publishChannel;
    if (!this.ready || !channel) {
      this.published.inc({ type: envelope.type, outcome: 'unavailable' });
      throw new BrokerUnavailableError();
    }
    const content = Buffer.from(JSON.stringify(envelope));
    await this.confirmed(channel, (done) =>
      channel.publish(
        this.names.events,
        envelope.type,
        content,
        {
          persistent: true,
          mandatory: true,
          messageId: envelope.id,
          type: envelope.type,
          contentType: 'application/cloudevents+json',
          timestamp: Math.floor(Date.parse(envelope.time) / 1000),
          appId: this.options.service,
          headers: { correlationid: envelope.correlationid },
        },
        done,
      ),
    ).catch((error: unknown) => {
      this.published.inc({ type: envelope.type, outcome: 'failed' });
      throw error;
    });
    this.published.inc({ type: envelope.type, outcome: 'confirmed' });
  }

  async close(): Promise<void> {
    this.closing = true;
    clearTimeout(this.reconnectTimer);
    this.ready = false;
    // A close on a connection that just died never gets its reply: bound every wait.
    for (const channel of this.consumerChannels) await withinMs(channel.close(), 2000);
    const deadline = Date.now() + 10_000;
    while (this.inFlight > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    if (this.connection) await withinMs(this.connection.close(), 2000);
    this.connection = undefined;
    this.connectedGauge.set(0);
  }

  private confirmed(channel: ConfirmChannel, send: (done: (error: unknown) => void) => void): Promise<void> {
    const timeoutMs = this.options.publishTimeoutMs ?? 5000;
    return new Promise<void>((resolve, reject) => {
      const timer = setTimeout(
        () => reject(new BrokerUnavailableError(`no publish confirm within ${timeoutMs} ms`)),
        timeoutMs,
      );
      try {
        send((error) => {
          clearTimeout(timer);
          if (error) reject(error instanceof Error ? error : new Error('message was nacked by the broker'));
          else resolve();
        });
      } catch (error) {
        clearTimeout(timer);
        reject(error instanceof Error ? error : new Error(String(error)));
      }
    });
  }

  private async connect(): Promise<void> {
    if (this.closing) return;
    const log = this.options.logger;
    try {
      const connection = await amqp.connect(this.options.url, {
        clientProperties: { connection_name: `${this.options.service}-${randomUUID().slice(0, 8)}` },
      });
      if (this.closing) {
        // close() ran while we were connecting: nobody will close this connection but us.
        await withinMs(connection.close(), 2000);
        return;
      }
      this.connection = connection;
      connection.on('error', (error: unknown) => log.warn({ err: error }, 'broker connection error'));
      connection.on('close', () => this.onDisconnect());
      const channel = await connection.createConfirmChannel();
      channel.on('error', (error: unknown) => log.warn({ err: error }, 'broker publish channel error'));
      channel.on('close', () => this.fail(new Error('publish channel closed')));
      channel.on('return', (message: ConsumeMessage) => {
        log.debug({ type: message.properties.type }, 'event had no subscriber queue');
      });
      await channel.assertExchange(this.names.events, 'topic', { durable: true });
      await channel.assertExchange(this.names.deadLetters, 'direct', { durable: true });
      this.publishChannel = channel;
      for (const spec of this.consumers) await this.startConsumer(connection, spec);
      this.attempt = 0;
      this.ready = true;
      this.connectedGauge.set(1);
      log.info({ consumers: this.consumers.map((c) => c.name) }, 'broker connected');
      for (const listener of this.readyListeners) listener();
    } catch (error) {
      log.warn({ err: error, attempt: this.attempt }, 'broker connect failed; retrying');
      this.fail(error);
    }
  }

  private fail(_error: unknown): void {
    const connection = this.connection;
    this.connection = undefined;
    if (connection) {
      // Closing fires 'close', which schedules the reconnect.
      connection.close().catch(() => this.onDisconnect());
    } else {
      this.onDisconnect();
    }
  }

  private onDisconnect(): void {
    this.ready = false;
    this.connectedGauge.set(0);
    this.publishChannel = undefined;
    this.consumerChannels = [];
    if (this.closing || this.reconnectTimer) return;
    const delay = Math.min(5000, 100 * 2 ** this.attempt) * (0.5 + Math.random() / 2);
    this.attempt += 1;
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = undefined;
      void this.connect();
    }, delay);
  }

  private async startConsumer(connection: ChannelModel, spec: ConsumerSpec): Promise<void> {
    if (spec.broadcast) return this.startBroadcastConsumer(connection, spec);
    const queue = this.names.queue(spec.name);
    const retryQueue = this.names.retryQueue(spec.name);
    const deadLetterQueue = this.names.deadLetterQueue(spec.name);
    const channel = await connection.createChannel();
    channel.on('error', (error: unknown) =>
      this.options.logger.warn({ err: error, queue }, 'consumer channel error'),
    );
    this.consumerChannels.push(channel);
    await channel.assertQueue(deadLetterQueue, { durable: true, arguments: { 'x-queue-type': 'quorum' } });
    await channel.bindQueue(deadLetterQueue, this.names.deadLetters, deadLetterQueue);
    await channel.assertQueue(queue, {
      durable: true,
      arguments: {
        'x-queue-type': 'quorum',
        'x-delivery-limit': this.options.deliveryLimit ?? 10,
        'x-dead-letter-exchange': this.names.deadLetters,
        'x-dead-letter-routing-key': deadLetterQueue,
      },
    });
    // Delayed retry: a message waits here for the TTL, then dead-letters back onto the main queue.
    await channel.assertQueue(retryQueue, {
      durable: true,
      arguments: {
        'x-message-ttl': spec.retryDelayMs ?? 1000,
        'x-dead-letter-exchange': '',
        'x-dead-letter-routing-key': queue,
      },
    });
    for (const definition of spec.events) await channel.bindQueue(queue, this.names.events, definition.type);
    await channel.prefetch(spec.prefetch ?? 16);
    await channel.consume(queue, (message) => {
      if (message) void this.handle(channel, spec, queue, retryQueue, message);
    });
  }

  private async startBroadcastConsumer(connection: ChannelModel, spec: ConsumerSpec): Promise<void> {
    const queue = `${this.names.queue(spec.name)}.${this.instanceId}`;
    const channel = await connection.createChannel();
    channel.on('error', (error: unknown) =>
      this.options.logger.warn({ err: error, queue }, 'consumer channel error'),
    );
    this.consumerChannels.push(channel);
    await channel.assertQueue(queue, { exclusive: true, autoDelete: true, durable: false });
    for (const definition of spec.events) await channel.bindQueue(queue, this.names.events, definition.type);
    await channel.prefetch(spec.prefetch ?? 16);
    await channel.consume(queue, (message) => {
      if (!message) return;
      this.inFlight += 1;
      const parsed = (() => {
        try {
          return parseEnvelope(JSON.parse(message.content.toString('utf8')));
        } catch {
          return { ok: false as const, reason: 'message body is not JSON' };
        }
      })();
      const work = parsed.ok
        ? runWithContext({ correlationId: parsed.envelope.correlationid }, () =>
            spec.handler(parsed.envelope),
          )
        : Promise.reject(new Error(parsed.reason));
      void work
        .then(
          () => this.consumed.inc({ queue: this.names.queue(spec.name), outcome: 'ack' }),
          (error: unknown) => {
            this.consumed.inc({ queue: this.names.queue(spec.name), outcome: 'dropped' });
            this.options.logger.warn({ err: error, queue }, 'broadcast handler failed; message dropped');
          },
        )
        .finally(() => {
          this.inFlight -= 1;
          try {
            channel.ack(message);
          } catch {
            // the channel closed: the exclusive queue is gone with it
          }
        });
    });
  }

  private async handle(
    channel: Channel,
    spec: ConsumerSpec,
    queue: string,
    retryQueue: string,
    message: ConsumeMessage,
  ) {
    this.inFlight += 1;
    const log = this.options.logger;
    try {
      let parsed: ReturnType<typeof parseEnvelope>;
      try {
        parsed = parseEnvelope(JSON.parse(message.content.toString('utf8')));
      } catch {
        parsed = { ok: false, reason: 'message body is not JSON' };
      }
      if (!parsed.ok) {
        log.warn(
          { queue, message_id: message.properties.messageId, reason: parsed.reason },
          'unparseable message dead-lettered',
        );
        this.consumed.inc({ queue, outcome: 'invalid' });
        channel.nack(message, false, false);
        return;
      }
      const envelope = parsed.envelope;
      try {
        await runWithContext({ correlationId: envelope.correlationid }, () => spec.handler(envelope));
        channel.ack(message);
        this.consumed.inc({ queue, outcome: 'ack' });
      } catch (error) {
        const attempts = Number(message.properties.headers?.[RETRY_HEADER] ?? 0) + 1;
        if (attempts >= (spec.maxAttempts ?? 5)) {
          log.error(
            { err: error, queue, event_id: envelope.id, attempts },
            'handler failed; message dead-lettered',
          );
          this.consumed.inc({ queue, outcome: 'dead_letter' });
          channel.nack(message, false, false);
          return;
        }
        log.warn({ err: error, queue, event_id: envelope.id, attempts }, 'handler failed; retrying later');
        await this.retryLater(retryQueue, message, attempts);
        channel.ack(message);
        this.consumed.inc({ queue, outcome: 'retry' });
      }
    } catch (error) {
      // The retry could not be scheduled (broker trouble): give the message back; the
      // quorum queue's delivery limit keeps this from looping forever.
      log.warn({ err: error, queue }, 'could not settle message; requeueing');
      try {
        channel.nack(message, false, true);
      } catch {
        // channel already closed: the broker redelivers the unacked message anyway
      }
    } finally {
      this.inFlight -= 1;
    }
  }

  private retryLater(retryQueue: string, message: ConsumeMessage, attempts: number): Promise<void> {
    const channel = this.publishChannel;
    if (!channel) return Promise.reject(new BrokerUnavailableError());
    return this.confirmed(channel, (done) =>
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
}

function withinMs(promise: Promise<unknown>, ms: number): Promise<void> {
  return new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    promise.then(
      () => {
        clearTimeout(timer);
        resolve();
      },
      () => {
        clearTimeout(timer);
        resolve();
      },
    );
  });
}

/** The correlation id of the current unit of work, or a new one. */
export function correlationId(): string {
  return currentContext()?.correlationId ?? randomUUID();
}
