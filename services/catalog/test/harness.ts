import { loadConfig } from '@pack/config';
import { events, type GeneralSettings, type Principal } from '@pack/contracts';
import { startService, type RunningService } from '@pack/runtime';
import {
  consumer,
  FakeSettings,
  metricValue,
  startHarness,
  waitFor,
  type CallResult,
  type Companions,
  type Harness,
  type HarnessOptions,
  type ServiceKind,
} from '@pack/testkit';
import { catalogEnvSchema, catalogService, type CatalogConfig } from '../src/service';

export { admin, consumer, newUser, otherConsumer, otherOwner, owner } from '@pack/testkit';
export type Reply = CallResult;
export { events, FakeSettings };

/** What a declaration's submission answers (201). */
export interface Submitted {
  declaration: { id: number };
  change_instance: { id: number };
  service_item: { id: number };
}

interface CatalogHelpers {
  /** Submits a declaration to the Service as `who` (a consumer by default); expects 201. */
  submit(serviceId: number, declaration: unknown, who?: Principal): Promise<Submitted>;
  /** Changes the settings and waits until the catalog has applied them. */
  changeSettings(change: (settings: GeneralSettings) => void): Promise<void>;
  /** The settings document the catalog reads (to check a test left it as it found it). */
  settings(): GeneralSettings;
}

type Running = RunningService<CatalogConfig>;
type CatalogCompanions = Companions & { settings: FakeSettings };

const settingsApplied = (url: string) => metricValue(url, 'settings_applied_total');

/** The catalog in this process, against the real database and broker, with its own names. */
export const catalogKind: ServiceKind<Running, CatalogCompanions, CatalogHelpers, HarnessOptions> = {
  name: 'catalog',
  async companions() {
    const settings = await new FakeSettings().start();
    return { settings, env: { SETTINGS_URL: settings.url }, close: () => settings.stop() };
  },
  start: (env, options) => startService(catalogService, loadConfig(catalogEnvSchema, env), options),
  async ready(service) {
    await waitFor(async () => (await fetch(`${service.url}/readyz`)).status === 200, {
      what: 'catalog ready',
    });
    await waitFor(async () => (await settingsApplied(service.url)) >= 1, { what: 'first settings load' });
  },
  extend: (catalog) => ({
    async submit(serviceId, declaration, who = consumer) {
      const reply = await catalog.as(who, 'POST', `/v1/catalog/services/${serviceId}/declarations/`, {
        declaration,
      });
      expect(reply.status).toBe(201);
      return reply.body as Submitted;
    },
    async changeSettings(change) {
      const before = await settingsApplied(catalog.url);
      await catalog.companions.settings.change(process.env.AMQP_URL!, catalog.namespace, change);
      await waitFor(async () => (await settingsApplied(catalog.url)) > before, { what: 'settings applied' });
    },
    settings: () => catalog.companions.settings.document,
  }),
};

export type CatalogHarness = Harness<Running, CatalogCompanions, CatalogHelpers, HarnessOptions>;

export const startCatalog = (options: HarnessOptions = {}): Promise<CatalogHarness> =>
  startHarness(catalogKind, options);
