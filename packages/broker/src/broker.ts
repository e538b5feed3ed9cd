import { randomUUID } from 'node:crypto';
import amqp, { type Channel, type ChannelModel, type ConsumeMessage } from 'amqplib';
import { context, contextOf, inSpan, trace } from '@pack/tracing';
import type { Envelope } from '@pack/contracts';
import type { Gauge } from '@pack/metrics';
import { waitFor } from '@pack/reliability';
import { coalesceWrites } from './coalesce-writes';
import { resetWhenSilent } from './silent-node';
import { BrokerUnavailableError, withinMs } from './confirm';
import { deliver, eventTypes, type ConsumerSpec } from './consumer';
import { redactUrl, UrlRotation, withHeartbeat } from './failover';
import type { BrokerOptions } from './options';
import { eventProperties, publishSpan } from './publishing';
import { Publisher } from './publisher';
import { QueueGauges } from './queue-gauges';
import { deliveryOf, sendForRetry } from './retry';
import { AMQP_SOCKET_OPTIONS, consumerQueueNames, declareConsumerQueue, topologyNames } from './topology';

export class Broker {
  private connection?: ChannelModel;
  private publisher?: Publisher;
  private consumerChannels: { channel: Channel; consumerTag?: string }[] = [];
  private readonly consumers: ConsumerSpec[] = [];
  private ready = false;
  private closing = false;
  /** The running wait for a connection (one at a time); cleared the moment one is ready. */
  private connecting?: object;
  /** Which connection the callbacks belong to: those of an earlier one change nothing. */
  private generation = 0;
  private readonly urls: UrlRotation;
  private readonly inFlight = new Set<Promise<void>>();
  private readonly names: ReturnType<typeof topologyNames>;
  private readonly instanceId = randomUUID().slice(0, 8);
  private readonly readyListeners = new Set<() => void>();
  private readonly published;
  private readonly consumed;
  /** Created by start(): a broker that is never started (the gateway's) exports no gauge to alert on. */
  private connectedGauge?: Gauge;
  private queueGauges?: QueueGauges;

  constructor(private readonly options: BrokerOptions) {
    this.names = topologyNames(options.namespace);
    this.urls = new UrlRotation(options.url);
    this.published = options.metrics.counter(
      'broker_published_total',
      'Events published with a broker confirm',
      ['type', 'outcome'],
    );
    this.consumed = options.metrics.counter('broker_consumed_total', 'Messages handled by consumers', [
      'queue',
      'outcome',
    ]);
  }

  /** Registers a consumer; it starts now if connected, and again after every reconnect. */
  consume(spec: ConsumerSpec): void {
    eventTypes(spec); // throws now, not at connect time, on two handlers for one event type
    this.consumers.push(spec);
    if (this.ready && this.connection) {
      const generation = this.generation;
      void this.startConsumer(this.connection, spec, generation).catch(() => this.fail(generation));
    }
  }

  /** Connects in the background, retrying with backoff; never throws. */
  start(): void {
    this.closing = false;
    this.registerGauges();
    void this.connectUntilReady(false);
  }

  private registerGauges(): void {
    if (this.connectedGauge) return;
    this.connectedGauge = this.options.metrics.gauge(
      'broker_connected',
      '1 when the broker connection and topology are up',
    );
    this.queueGauges = new QueueGauges(this.options.metrics, this.names, {
      consumers: () => this.consumers,
      connection: () => (this.ready ? this.connection : undefined),
    });
  }

  isReady(): boolean {
    return this.ready;
  }

  /** Every queue this broker declares (tests delete them afterwards). */
  declaredQueues(): string[] {
    return consumerQueueNames(this.names, this.consumers);
  }

  /** Calls `listener` each time the broker becomes ready (the outbox relay drains then). */
  onReady(listener: () => void): () => void {
    this.readyListeners.add(listener);
    return () => this.readyListeners.delete(listener);
  }

  /** Publishes persistently and resolves only once the broker has confirmed it. */
  publish(envelope: Envelope): Promise<void> {
    // The publish continues the event's own trace (the work that made it, perhaps long before, in
    // an outbox), unless it runs inside a span already (the outbox relay's, a handler's).
    const parent = trace.getSpan(context.active()) ? context.active() : contextOf(envelope);
    return inSpan(`publish ${envelope.type}`, publishSpan(this.names.events, envelope, parent), () =>
      this.publishConfirmed(envelope),
    );
  }

  private async publishConfirmed(envelope: Envelope): Promise<void> {
    // Not `ready`: handlers that finish while close() drains them may still publish.
    const publisher = this.publisher;
    if (!publisher) {
      this.published.inc({ type: envelope.type, outcome: 'unavailable' });
      throw new BrokerUnavailableError();
    }
    const content = Buffer.from(JSON.stringify(envelope));
    const properties = eventProperties(envelope, this.options.service);
    await publisher
      .send((channel, done) => channel.publish(this.names.events, envelope.type, content, properties, done))
      .catch((error: unknown) => {
        this.published.inc({ type: envelope.type, outcome: 'failed' });
        throw error;
      });
    this.published.inc({ type: envelope.type, outcome: 'confirmed' });
  }

  /**
   * Stops consuming (basic.cancel: no new deliveries) and lets running handlers finish and settle
   * their messages within `shutdownTimeoutMs`; publishing still works, so a handler can send its
   * result. A message whose handler outlives the bound stays unacknowledged and is redelivered.
   * The service shuts what its handlers use (HTTP clients, breakers) only after this.
   */
  async stopConsuming(): Promise<void> {
    this.closing = true;
    this.ready = false;
    const consumers = this.consumerChannels.splice(0);
    // A request on a connection that just died never gets its reply: bound every wait.
    for (const { channel, consumerTag } of consumers)
      if (consumerTag) await withinMs(channel.cancel(consumerTag), 2000);
    if (consumers.length > 0)
      this.options.logger.info(
        { in_flight: this.inFlight.size },
        'stopped consuming; finishing running handlers',
      );
    await withinMs(Promise.allSettled([...this.inFlight]), this.options.shutdownTimeoutMs ?? 10_000);
    if (this.inFlight.size > 0)
      this.options.logger.warn(
        { in_flight: this.inFlight.size },
        'handlers still running at shutdown; their messages will be redelivered',
      );
    for (const { channel } of consumers) await withinMs(channel.close(), 2000);
  }

  /** stopConsuming, then closes the connection. */
  async close(): Promise<void> {
    await this.stopConsuming();
    const connection = this.connection;
    this.connection = undefined;
    this.publisher?.retire();
    this.publisher = undefined;
    if (connection) await withinMs(connection.close(), 2000);
    this.connectedGauge?.set(0);
  }

  /**
   * Connects, again with backoff (jittered, 100 ms to 5 s) while that fails, until connected or
   * closing; `afterLoss`: the first wait comes before the first try. One wait at a time.
   */
  private async connectUntilReady(afterLoss: boolean): Promise<void> {
    if (this.connecting || this.closing) return;
    const wait = {};
    this.connecting = wait;
    await waitFor((attempt) => this.connect(attempt), {
      baseDelayMs: 100,
      maxDelayMs: 5000,
      jitter: 'equal',
      delayFirst: afterLoss,
      stopped: () => this.closing,
    });
    if (this.connecting === wait) this.connecting = undefined;
  }

  /** One try: connected and consuming, or thrown (its connection given up). */
  private async connect(attempt: number): Promise<void> {
    if (this.closing) return;
    const log = this.options.logger;
    const generation = ++this.generation;
    const url = this.urls.take();
    try {
      const connection = await amqp.connect(withHeartbeat(url, this.options.heartbeatSeconds), {
        ...AMQP_SOCKET_OPTIONS,
        timeout: 10_000, // a node that does not answer at all: the next URL
        clientProperties: { connection_name: `${this.options.service}-${randomUUID().slice(0, 8)}` },
      });
      coalesceWrites(connection);
      resetWhenSilent(connection);
      if (this.closing) {
        // close() ran while we were connecting: nobody will close this connection but us.
        await withinMs(connection.close(), 2000);
        return;
      }
      this.connection = connection;
      connection.on('error', (error: unknown) => log.warn({ err: error }, 'broker connection error'));
      connection.on('close', () => this.onDisconnect(generation));
      this.publisher = await Publisher.open(connection, this.names, log, () => this.fail(generation), {
        timeoutMs: this.options.publishTimeoutMs ?? 5000,
        nackRetryMs: this.options.nackRetryMs ?? 5000,
      });
      for (const spec of this.consumers) await this.startConsumer(connection, spec, generation);
      // Given up meanwhile (a channel closed): try again.
      if (generation !== this.generation || this.connection !== connection)
        throw new Error('the connection closed while it was set up');
      // Ready in the same turn as the wait ends: a loss from now on starts a new wait.
      this.connecting = undefined;
      this.ready = true;
      this.connectedGauge?.set(1);
      log.info({ consumers: this.consumers.map((c) => c.name), node: redactUrl(url) }, 'broker connected');
      for (const listener of this.readyListeners) listener();
    } catch (error) {
      log.warn({ err: error, attempt: attempt - 1, node: redactUrl(url) }, 'broker connect failed; retrying');
      this.fail(generation);
      throw error;
    }
  }

  /**
   * Gives up connection `generation` (a channel of it closed, or setting it up failed): closes
   * it and reconnects, to the next URL. A call about an earlier connection changes nothing.
   */
  private fail(generation: number): void {
    if (generation !== this.generation) return;
    const connection = this.connection;
    this.connection = undefined;
    if (connection) {
      // Closing fires 'close', which schedules the reconnect.
      connection.close().catch(() => this.onDisconnect(generation));
    } else {
      this.onDisconnect(generation);
    }
  }

  private onDisconnect(generation: number): void {
    if (generation !== this.generation) return;
    this.connection = undefined;
    this.ready = false;
    this.connectedGauge?.set(0);
    this.publisher?.retire();
    this.publisher = undefined;
    this.queueGauges?.forgetChannel();
    this.consumerChannels = [];
    // While a wait runs, its next try follows; otherwise the connection was lost: a new wait.
    void this.connectUntilReady(true);
  }

  private async startConsumer(connection: ChannelModel, spec: ConsumerSpec, generation: number) {
    const channel = await connection.createChannel();
    channel.on('error', (error: unknown) =>
      this.options.logger.warn({ err: error, consumer: spec.name }, 'consumer channel error'),
    );
    // A consumer channel the broker closed (its queue's node went away, a channel error) would
    // leave this consumer without deliveries: start over on a new connection, unless stopping.
    channel.on('close', () => {
      if (!this.closing) this.fail(generation);
    });
    const entry: { channel: Channel; consumerTag?: string } = { channel };
    this.consumerChannels.push(entry);
    const queue = await declareConsumerQueue(channel, this.names, spec, {
      // A broadcast queue is exclusive to its connection: a new name for each one, as the broker
      // may still hold the previous connection and its queue (a node cut off from the client
      // lets it go only when its own heartbeat check or the cluster notices, up to a minute).
      instanceId: `${this.instanceId}-${generation}`,
      deliveryLimit: this.options.deliveryLimit ?? 10,
    });
    await channel.prefetch(spec.prefetch ?? 16);
    const { consumerTag } = await channel.consume(queue, (message) => {
      if (message) this.track(this.handle(channel, spec, queue, message));
    });
    entry.consumerTag = consumerTag;
  }

  /** Remembers a running handler until it has settled its message, so close() can wait for it. */
  private track(work: Promise<void>): void {
    const tracked: Promise<void> = work
      .catch((error: unknown) => this.options.logger.error({ err: error }, 'message handling failed'))
      .finally(() => this.inFlight.delete(tracked));
    this.inFlight.add(tracked);
  }

  private async handle(channel: Channel, spec: ConsumerSpec, queue: string, message: ConsumeMessage) {
    const retryQueue = this.names.retryQueue(spec.name);
    const delivery = deliveryOf(channel, message, (attempts) => {
      const publisher = this.publisher;
      if (!publisher) return Promise.reject(new BrokerUnavailableError());
      return sendForRetry(publisher, retryQueue, message, attempts);
    });
    const outcome = await deliver(spec, delivery, this.options.logger, this.options.transient);
    this.consumed.inc({ queue: spec.broadcast ? this.names.queue(spec.name) : queue, outcome });
  }
}
