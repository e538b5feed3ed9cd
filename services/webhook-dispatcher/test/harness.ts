import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadConfig } from '@pack/config';
import {
  events,
  type EventData,
  type EventDefinition,
  type GeneralSettings,
  type Principal,
} from '@pack/contracts';
import { startService, type RunningService } from '@pack/runtime';
import {
  call,
  dropDatabase,
  deleteQueues,
  FakeSettings,
  metricValue,
  publishEvent,
  seededSecret,
  testEnv,
  waitFor,
  type CallResult,
} from '@pack/testkit';
import {
  webhookDispatcherEnvSchema,
  webhookDispatcherService,
  type WebhookDispatcherConfig,
} from '../src/service';

export const WEBHOOKS = '/v1/external/serviceowner/webhooks/';
export const admin: Principal = { id: 1, username: 'ada', role: 'admin' };
export const owner: Principal = { id: 10, username: 'olivia', role: 'service_owner' };
export const otherOwner: Principal = { id: 11, username: 'oscar', role: 'service_owner' };
export const consumer: Principal = { id: 20, username: 'carla', role: 'consumer' };

export interface Received {
  headers: http.IncomingHttpHeaders;
  body: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read the JSON a target received by field name
  json: any;
  at: number;
}

export interface Answer {
  /** Never answer (the connection stays open until the receiver stops). */
  hang?: boolean;
  status: number;
  body?: string;
  headers?: Record<string, string>;
}

/** A local webhook target: records every request and answers from a script (200 when it runs out). */
export class Receiver {
  readonly requests: Received[] = [];
  private readonly script: Answer[] = [];
  fallback: Answer = { status: 200, body: 'ok' };
  private server?: http.Server;
  url = '';

  async start(): Promise<this> {
    this.server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        let json: unknown = null;
        try {
          json = JSON.parse(body);
        } catch {
          // kept as text
        }
        this.requests.push({ headers: req.headers, body, json, at: Date.now() });
        const answer = this.script.shift() ?? this.fallback;
        if (answer.hang) return;
        res.writeHead(answer.status, answer.headers ?? {});
        res.end(answer.body ?? '');
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hook`;
    return this;
  }

  next(...answers: Answer[]): void {
    this.script.push(...answers);
  }

  /** Waits until at least `count` requests arrived, and returns them. */
  received(count: number): Promise<Received[]> {
    return waitFor(() => (this.requests.length >= count ? [...this.requests] : undefined), {
      what: `${count} webhook requests (got ${this.requests.length})`,
    });
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}

/** Stands in for the catalog's change instance API (manual triggers read a state there). */
export class FakeCatalog {
  readonly instances = new Map<number, { service_id: number; state: string }>();
  private server?: http.Server;
  url = '';

  async start(): Promise<this> {
    this.server = http.createServer((req, res) => {
      const id = Number(/\/v1\/catalog\/change_instances\/(\d+)\/$/.exec(req.url ?? '')?.[1]);
      const found = this.instances.get(id);
      res.writeHead(found ? 200 : 404, { 'content-type': 'application/json' });
      res.end(JSON.stringify(found ? { id, service: { id: found.service_id }, state: found.state } : {}));
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

export interface DispatcherUnderTest {
  service: RunningService<WebhookDispatcherConfig>;
  settings: FakeSettings;
  env: Record<string, string>;
  as(principal: Principal | null, method: string, path: string, body?: unknown): Promise<CallResult>;
  publish<D extends EventDefinition>(definition: D, data: EventData<D>, id?: string): Promise<string>;
  /** Announces a catalog Service (as the catalog would) and waits until the dispatcher knows it. */
  addService(id: number, by?: Principal, name?: string): Promise<void>;
  changeSettings(change: (settings: GeneralSettings) => void): Promise<void>;
  collection(
    name: string,
  ): ReturnType<RunningService<WebhookDispatcherConfig>['context']['mongo']['connection']['collection']>;
  /** Stops this instance only (the database stays for the others). */
  stop(): Promise<void>;
  /** Stops and removes the database and queues. */
  stopAndClean(): Promise<void>;
}

export interface StartOptions {
  env?: Record<string, string>;
  settings?: FakeSettings;
  /** Another instance to share the database and broker namespace with. */
  peer?: DispatcherUnderTest;
  /** Where the dispatcher writes its log lines (set LOG_LEVEL in env to have any). */
  logDestination?: NonNullable<Parameters<typeof startService>[2]>['logDestination'];
}

export const TEST_TUNING = {
  PACK_ALLOWED_TARGET_CIDRS: '127.0.0.0/8,::1/128',
  WEBHOOK_POLL_MS: '50',
  WEBHOOK_RETRY_BASE_MS: '50',
  WEBHOOK_RETRY_MAX_MS: '400',
  WEBHOOK_RETENTION_SWEEP_MS: '100',
  WEBHOOK_TIMEOUT_MS: '2000',
};

export async function startDispatcher(options: StartOptions = {}): Promise<DispatcherUnderTest> {
  const settings = options.settings ?? options.peer?.settings ?? (await new FakeSettings().start());
  const shared: Record<string, string> = options.peer
    ? { MONGO_DB: options.peer.env.MONGO_DB!, BROKER_NAMESPACE: options.peer.env.BROKER_NAMESPACE! }
    : {};
  // The catalog, asked for a Service the projection lacks, owns none unless the test says so.
  const catalog = options.env?.CATALOG_URL ? undefined : await new FakeCatalog().start();
  const env = testEnv('webhook-dispatcher', {
    SETTINGS_URL: settings.url,
    ...(catalog && { CATALOG_URL: catalog.url }),
    ...TEST_TUNING,
    ...shared,
    ...options.env,
  });
  const config = loadConfig(webhookDispatcherEnvSchema, env);
  const service = await startService(webhookDispatcherService, config, {
    logDestination: options.logDestination,
  });
  await service.started;
  await waitFor(async () => (await fetch(`${service.url}/readyz`)).status === 200, {
    what: 'dispatcher ready',
  });
  const namespace = config.BROKER_NAMESPACE;
  const amqpUrl = process.env.AMQP_URL!;
  const collection = (name: string) => service.context.mongo.connection.collection(name);
  const owned = !options.settings && !options.peer;

  const under: DispatcherUnderTest = {
    service,
    env,
    settings,
    as: (principal, method, path, body) => call(service.url, method, path, { principal, body }),
    publish: (definition, data, id) => publishEvent(amqpUrl, namespace, definition, data, id),
    async addService(id, by = owner, name = `Service ${id}`) {
      await publishEvent(amqpUrl, namespace, events.serviceChanged, {
        service_id: id,
        name,
        owner: { id: by.id, name: by.username },
        deleted: false,
        version: Date.now(),
      });
      await waitFor(
        async () => (await collection('services').findOne({ _id: id as never, owner_id: by.id })) !== null,
        {
          what: `service ${id} in the projection`,
        },
      );
    },
    async changeSettings(change) {
      await settings.change(amqpUrl, namespace, change);
      const version = settings.version;
      await waitFor(() => settingsApplied(service.url, version), { what: 'settings applied' });
    },
    collection,
    async stop() {
      await service.stop();
      await catalog?.stop();
    },
    async stopAndClean() {
      const queues = service.context.broker.declaredQueues();
      await service.stop();
      await catalog?.stop();
      await dropDatabase(env.MONGO_URL!, env.MONGO_DB!);
      if (queues.length > 0) await deleteQueues(amqpUrl, queues);
      if (owned) await settings.stop();
    },
  };
  await waitFor(async () => (await metricValue(service.url, 'settings_applied_total')) >= 1, {
    what: 'first settings load',
  });
  return under;
}

async function settingsApplied(url: string, version: number): Promise<boolean> {
  return (await metricValue(url, 'settings_version')) >= version;
}

let nextService = 1000;

/** A Service no other test uses, owned by `by`, with one webhook on it aimed at `targetUrl`. */
/** The authorization webhookOnNewService stores (seeded for the suite-wide leak scan; masks show 0001). */
export const RECEIVER_AUTHORIZATION = `Bearer receiver-token-${seededSecret('the receiver authorization', { suffix: '0001' })}`;

export async function webhookOnNewService(
  dispatcher: DispatcherUnderTest,
  targetUrl: string,
  change: Record<string, unknown> = {},
  by: Principal = owner,
): Promise<{ service: number; webhook: { id: number; secret: string } }> {
  const service = ++nextService;
  await dispatcher.addService(service, by);
  const created = await dispatcher.as(by, 'POST', WEBHOOKS, {
    name: `hook ${service}`,
    description: '',
    service,
    target_url: targetUrl,
    authorization: RECEIVER_AUTHORIZATION,
    ...change,
  });
  if (created.status !== 201) throw new Error(`webhook not created: ${created.status} ${created.text}`);
  return { service, webhook: created.body as { id: number; secret: string } };
}

/** A change instance event payload for Service `serviceId` in `state`. */
export function changeInstance(
  serviceId: number,
  id: number,
  state: EventData<typeof events.changeInstanceCreated>['state'],
  by = owner,
) {
  return {
    change_instance_id: id,
    service_item_id: 1,
    declaration_id: 1,
    declaration_json: '{}',
    consumer_id: consumer.id,
    consumer_name: consumer.username,
    service: { id: serviceId, name: `Service ${serviceId}`, owner: { id: by.id, name: by.username } },
    state,
  };
}

export { events };
