import { randomBytes } from 'node:crypto';
import { loadConfig } from '@pack/config';
import { catalogEnvSchema, catalogService } from '@pack/catalog';
import { gatewayEnvSchema, gatewayService } from '@pack/gateway';
import { startService, type RunningService } from '@pack/runtime';
import { settingsEnvSchema, settingsService } from '@pack/settings';
import { call, stopAndClean, testEnv, uniqueName, type CallOptions, type CallResult } from '@pack/testkit';

/** Every service of the platform in this process, with the gateway in front, as a user meets it. */
export interface Stack {
  gateway: string;
  adminToken: string;
  services: RunningService<never>[];
  /** Base URL of each service behind the gateway, by name (to reach one past the gateway). */
  urls: Record<string, string>;
  /** A running service by its name (gateway, settings, catalog). */
  service(name: string): RunningService<never>;
  /** Calls the public API with a token (the admin's unless another is given). */
  call(method: string, path: string, options?: Omit<CallOptions, 'principal'>): Promise<CallResult>;
  stop(): Promise<void>;
}

/**
 * The services behind the gateway, in start order. `env` is the gateway variable that points at
 * the service, and each service also gets the URLs of those started before it (the settings
 * cache needs SETTINGS_URL). Every service shares one broker namespace so events flow between them.
 */
const BEHIND_GATEWAY = [
  {
    name: 'settings',
    env: 'SETTINGS_URL',
    start: (env: Env) => startService(settingsService, loadConfig(settingsEnvSchema, env)),
  },
  {
    name: 'catalog',
    env: 'CATALOG_URL',
    start: (env: Env) => startService(catalogService, loadConfig(catalogEnvSchema, env)),
  },
] as const;

type Env = Record<string, string>;

export async function startStack(): Promise<Stack> {
  const adminToken = `pack_${randomBytes(32).toString('base64url')}`;
  const namespace = uniqueName('e2e');
  const upstreams: Env = {};
  const services: RunningService<never>[] = [];
  const urls: Record<string, string> = {};
  for (const service of BEHIND_GATEWAY) {
    const running = await service.start(testEnv(service.name, { ...upstreams, BROKER_NAMESPACE: namespace }));
    services.push(running as unknown as RunningService<never>);
    upstreams[service.env] = running.url;
    urls[service.name] = running.url;
  }
  const gatewayConfig = loadConfig(
    gatewayEnvSchema,
    testEnv('gateway', { ...upstreams, PACK_ADMIN_TOKEN: adminToken }),
  );
  const gateway = await startService(gatewayService, gatewayConfig);
  services.unshift(gateway as unknown as RunningService<never>);
  await Promise.all(services.map((service) => service.started));

  return {
    gateway: gateway.url,
    adminToken,
    services,
    urls,
    service(name) {
      const found = services.find((service) => service.definition.name === name);
      if (!found) throw new Error(`no service named ${name} in the stack`);
      return found;
    },
    call: (method, path, options = {}) =>
      call(gateway.url, method, path, {
        ...options,
        token: options.token === undefined ? adminToken : options.token,
      }),
    async stop() {
      for (const service of services) await stopAndClean(service);
    },
  };
}
