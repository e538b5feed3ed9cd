import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadConfig } from '@pack/config';
import { events, type EventData, type GeneralSettings, type Principal } from '@pack/contracts';
import { startService, type RunningService } from '@pack/runtime';
import {
  consumer,
  FakeSettings,
  metricValue,
  owner,
  startHarness,
  seededSecret,
  waitFor,
  type Companions,
  type Harness,
  type HarnessOptions,
  type ServiceKind,
} from '@pack/testkit';
import {
  webhookDispatcherEnvSchema,
  webhookDispatcherService,
  type WebhookDispatcherConfig,
} from '../src/service';

export { admin, consumer, otherOwner, owner, Receiver, type Answer, type Received } from '@pack/testkit';
export const WEBHOOKS = '/v1/external/serviceowner/webhooks/';

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

export const TEST_TUNING = {
  PACK_ALLOWED_TARGET_CIDRS: '127.0.0.0/8,::1/128',
  WEBHOOK_POLL_MS: '50',
  WEBHOOK_RETRY_BASE_MS: '50',
  WEBHOOK_RETRY_MAX_MS: '400',
  WEBHOOK_RETENTION_SWEEP_MS: '100',
  // WEBHOOK_TIMEOUT_MS stays the product's 10 s: no test here waits for it, and a receiver in this
  // process answers late on a loaded machine (a 2 s one timed out and the fire was sent twice).
};

interface DispatcherHelpers {
  /** The fake settings service it reads (shared by its replicas). */
  settings: FakeSettings;
  /** Announces a catalog Service (as the catalog would) and waits until the dispatcher knows it. */
  addService(id: number, by?: Principal, name?: string): Promise<void>;
  changeSettings(change: (settings: GeneralSettings) => void): Promise<void>;
}

type Running = RunningService<WebhookDispatcherConfig>;
type DispatcherCompanions = Companions & { settings: FakeSettings };

/** The webhook dispatcher in this process, on its own database and broker namespace. */
export const dispatcherKind: ServiceKind<Running, DispatcherCompanions, DispatcherHelpers, HarnessOptions> = {
  name: 'webhook-dispatcher',
  env: TEST_TUNING,
  async companions({ env = {} }) {
    const settings = await new FakeSettings().start();
    // The catalog, asked for a Service the projection lacks, owns none unless the test says so.
    const catalog = env.CATALOG_URL ? undefined : await new FakeCatalog().start();
    return {
      settings,
      env: { SETTINGS_URL: settings.url, ...(catalog && { CATALOG_URL: catalog.url }) },
      async close() {
        await catalog?.stop();
        await settings.stop();
      },
    };
  },
  start: (env, options) =>
    startService(webhookDispatcherService, loadConfig(webhookDispatcherEnvSchema, env), options),
  async ready(service) {
    await waitFor(async () => (await fetch(`${service.url}/readyz`)).status === 200, {
      what: 'dispatcher ready',
    });
    await waitFor(async () => (await metricValue(service.url, 'settings_applied_total')) >= 1, {
      what: 'first settings load',
    });
  },
  extend: (dispatcher) => ({
    settings: dispatcher.companions.settings,
    async addService(id, by = owner, name = `Service ${id}`) {
      await dispatcher.publish(events.serviceChanged, {
        service_id: id,
        name,
        owner: { id: by.id, name: by.username },
        deleted: false,
        version: Date.now(),
      });
      await waitFor(
        async () =>
          (await dispatcher.collection('services').findOne({ _id: id as never, owner_id: by.id })) !== null,
        { what: `service ${id} in the projection` },
      );
    },
    async changeSettings(change) {
      const { settings } = dispatcher.companions;
      await settings.change(process.env.AMQP_URL!, dispatcher.namespace, change);
      const version = settings.version;
      await waitFor(async () => (await metricValue(dispatcher.url, 'settings_version')) >= version, {
        what: 'settings applied',
      });
    },
  }),
};

export type DispatcherHarness = Harness<Running, DispatcherCompanions, DispatcherHelpers, HarnessOptions>;

export const startDispatcher = (options: HarnessOptions = {}): Promise<DispatcherHarness> =>
  startHarness(dispatcherKind, options);

let nextService = 1000;

/** A Service no other test uses, owned by `by`, with one webhook on it aimed at `targetUrl`. */
/** The authorization webhookOnNewService stores (seeded for the suite-wide leak scan; masks show 0001). */
export const RECEIVER_AUTHORIZATION = `Bearer receiver-token-${seededSecret('the receiver authorization', { suffix: '0001' })}`;

export async function webhookOnNewService(
  dispatcher: DispatcherHarness,
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
