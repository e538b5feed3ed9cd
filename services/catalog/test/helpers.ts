import http from 'node:http';
import type { AddressInfo } from 'node:net';
import amqp, { type Channel, type ChannelModel } from 'amqplib';
import { topologyNames } from '@pack/broker';
import { loadConfig } from '@pack/config';
import {
  createEnvelope,
  defaultGeneralSettings,
  events,
  type EventData,
  type EventDefinition,
  type GeneralSettings,
  type Principal,
} from '@pack/contracts';
import { startService, type RunningService } from '@pack/runtime';
import { callAs, stopAndClean, testEnv, waitFor, type CallResult } from '@pack/testkit';
import { catalogEnvSchema, catalogService, type CatalogConfig } from '../src/service';

export const admin: Principal = { id: 1, username: 'ada', role: 'admin' };
export const owner: Principal = { id: 10, username: 'olivia', role: 'service_owner' };
export const otherOwner: Principal = { id: 11, username: 'oscar', role: 'service_owner' };
export const consumer: Principal = { id: 20, username: 'carla', role: 'consumer' };
export const otherConsumer: Principal = { id: 21, username: 'conrad', role: 'consumer' };

export type Reply = CallResult;

/**
 * Stands in for the settings service: serves a settings document the test controls and, on
 * change, publishes settings.changed the way the real one does.
 */
export class FakeSettings {
  document: GeneralSettings = defaultGeneralSettings();
  version = 1;
  private server?: http.Server;
  url = '';

  async start(): Promise<this> {
    this.server = http.createServer((req, res) => {
      res.setHeader('content-type', 'application/json');
      res.setHeader('x-settings-version', String(this.version));
      res.end(JSON.stringify(this.document));
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}

export interface CatalogUnderTest {
  service: RunningService<CatalogConfig>;
  url: string;
  namespace: string;
  as(principal: Principal | null, method: string, path: string, body?: unknown): Promise<Reply>;
  /** Changes the settings and waits until the catalog has applied them. */
  changeSettings(change: (settings: GeneralSettings) => void): Promise<void>;
  /** Publishes an event onto the catalog's exchange, as another service would. */
  publish<D extends EventDefinition>(definition: D, data: EventData<D>): Promise<string>;
  collection(
    name: string,
  ): ReturnType<RunningService<CatalogConfig>['context']['mongo']['connection']['collection']>;
  stop(): Promise<void>;
}

export interface StartOptions {
  env?: Record<string, string>;
  settings?: FakeSettings;
}

async function metric(url: string, name: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const match = new RegExp(`^${name}(?:\\{[^}]*\\})? (\\d+(?:\\.\\d+)?)$`, 'm').exec(text);
  return match ? Number(match[1]) : 0;
}

/** The catalog in this process, against the real database and broker, with its own names. */
export async function startCatalog(options: StartOptions = {}): Promise<CatalogUnderTest> {
  const settings = options.settings ?? (await new FakeSettings().start());
  const env = testEnv('catalog', { SETTINGS_URL: settings.url, ...options.env });
  const config = loadConfig(catalogEnvSchema, env);
  const service = await startService(catalogService, config);
  await service.started;
  await waitFor(async () => (await fetch(`${service.url}/readyz`)).status === 200, { what: 'catalog ready' });
  await waitFor(async () => (await metric(service.url, 'settings_applied_total')) >= 1, {
    what: 'first settings load',
  });
  const namespace = config.BROKER_NAMESPACE;
  const amqpUrl = process.env.AMQP_URL!;

  return {
    service,
    url: service.url,
    namespace,
    as: (principal, method, path, body) => callAs(service.url, principal, method, path, body),
    async changeSettings(change) {
      const before = await metric(service.url, 'settings_applied_total');
      change(settings.document);
      settings.version += 1;
      await publishRaw(amqpUrl, namespace, events.settingsChanged, {
        groups: ['all'],
        version: settings.version,
        changed_by: 1,
      });
      await waitFor(async () => (await metric(service.url, 'settings_applied_total')) > before, {
        what: 'settings applied',
      });
    },
    publish: (definition, data) => publishRaw(amqpUrl, namespace, definition, data),
    collection: (name) => service.context.mongo.connection.collection(name),
    async stop() {
      await stopAndClean(service);
      if (!options.settings) await settings.stop();
    },
  };
}

export async function publishRaw<D extends EventDefinition>(
  amqpUrl: string,
  namespace: string,
  definition: D,
  data: EventData<D>,
): Promise<string> {
  const envelope = createEnvelope(definition, data, { source: 'test', correlationId: 'test' });
  const connection = await amqp.connect(amqpUrl);
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

export interface TappedEvent {
  id: string;
  type: string;
  source: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read the payload by field name
  data: any;
}

/** A queue of our own on the events exchange, to see exactly what the catalog published. */
export class EventTap {
  private connection?: ChannelModel;
  private channel?: Channel;
  private queue = '';
  readonly seen: TappedEvent[] = [];

  constructor(
    private readonly amqpUrl: string,
    private readonly namespace: string,
  ) {}

  async start(pattern = 'catalog.#'): Promise<this> {
    this.connection = await amqp.connect(this.amqpUrl);
    this.channel = await this.connection.createChannel();
    const exchange = topologyNames(this.namespace).events;
    await this.channel.assertExchange(exchange, 'topic', { durable: true });
    this.queue = (await this.channel.assertQueue('', { exclusive: true, autoDelete: true })).queue;
    await this.channel.bindQueue(this.queue, exchange, pattern);
    return this;
  }

  /** Everything delivered so far (the queue is read until empty). */
  async drain(): Promise<TappedEvent[]> {
    for (;;) {
      const message = await this.channel!.get(this.queue, { noAck: true });
      if (!message) return this.seen;
      this.seen.push(JSON.parse(message.content.toString('utf8')) as TappedEvent);
    }
  }

  async stop(): Promise<void> {
    await this.connection?.close().catch(() => undefined);
  }
}

/**
 * Waits until the catalog has nothing left in any outbox: each event has then been confirmed by
 * the broker and removed, so nothing more will be published for the changes made so far.
 */
export async function outboxSettled(catalog: CatalogUnderTest): Promise<void> {
  await waitFor(() => catalog.service.context.broker.isReady(), { what: 'broker connection' });
  await waitFor(
    async () => {
      await catalog.service.context.outbox.flush();
      return (await catalog.collection('change_instances').countDocuments({ _outbox_pending: true })) === 0;
    },
    { what: 'outbox empty' },
  );
}

export { events };
