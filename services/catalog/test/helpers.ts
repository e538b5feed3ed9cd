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
  FakeSettings,
  metricValue,
  publishEvent,
  stopAndClean,
  testEnv,
  waitFor,
  type CallResult,
} from '@pack/testkit';
import { catalogEnvSchema, catalogService, type CatalogConfig } from '../src/service';

export const admin: Principal = { id: 1, username: 'ada', role: 'admin' };
export const owner: Principal = { id: 10, username: 'olivia', role: 'service_owner' };
export const otherOwner: Principal = { id: 11, username: 'oscar', role: 'service_owner' };
export const consumer: Principal = { id: 20, username: 'carla', role: 'consumer' };
export const otherConsumer: Principal = { id: 21, username: 'conrad', role: 'consumer' };

export type Reply = CallResult;

let nextUserId = 1000;
/**
 * A user no other test has seen (ids from 1000 up), so a test can count and list what is
 * visible to its users without depending on what earlier tests left in the database.
 */
export function newUser(role: Principal['role'], name = role): Principal {
  nextUserId += 1;
  return { id: nextUserId, username: `${name}_${nextUserId}`, role };
}

export { FakeSettings };

export interface CatalogUnderTest {
  service: RunningService<CatalogConfig>;
  url: string;
  namespace: string;
  as(principal: Principal | null, method: string, path: string, body?: unknown): Promise<Reply>;
  /** Changes the settings and waits until the catalog has applied them. */
  changeSettings(change: (settings: GeneralSettings) => void): Promise<void>;
  /** The settings document the catalog reads (to check a test left it as it found it). */
  settings(): GeneralSettings;
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

/** The catalog in this process, against the real database and broker, with its own names. */
export async function startCatalog(options: StartOptions = {}): Promise<CatalogUnderTest> {
  const settings = options.settings ?? (await new FakeSettings().start());
  const env = testEnv('catalog', { SETTINGS_URL: settings.url, ...options.env });
  const config = loadConfig(catalogEnvSchema, env);
  const service = await startService(catalogService, config);
  await service.started;
  await waitFor(async () => (await fetch(`${service.url}/readyz`)).status === 200, { what: 'catalog ready' });
  await waitFor(async () => (await metricValue(service.url, 'settings_applied_total')) >= 1, {
    what: 'first settings load',
  });
  const namespace = config.BROKER_NAMESPACE;
  const amqpUrl = process.env.AMQP_URL!;

  return {
    service,
    url: service.url,
    namespace,
    as: (principal, method, path, body) => call(service.url, method, path, { principal, body }),
    async changeSettings(change) {
      const before = await metricValue(service.url, 'settings_applied_total');
      await settings.change(amqpUrl, namespace, change);
      await waitFor(async () => (await metricValue(service.url, 'settings_applied_total')) > before, {
        what: 'settings applied',
      });
    },
    settings: () => settings.document,
    publish: (definition, data) => publishEvent(amqpUrl, namespace, definition, data),
    collection: (name) => service.context.mongo.connection.collection(name),
    async stop() {
      await stopAndClean(service);
      if (!options.settings) await settings.stop();
    },
  };
}

export { events };
