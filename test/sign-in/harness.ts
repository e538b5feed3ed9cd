import { randomBytes } from 'node:crypto';
import { loadConfig } from '@pack/config';
import { gatewayEnvSchema, gatewayService, type GatewayConfig } from '@pack/gateway';
import { startService, type RunningService } from '@pack/runtime';
import { settingsEnvSchema, settingsService, type SettingsConfig } from '@pack/settings';
import {
  call,
  LogCapture,
  stopAndClean,
  testEnv,
  uniqueName,
  type CallOptions,
  type CallResult,
} from '@pack/testkit';

/** The settings service and a gateway in front of it, sharing a broker namespace. */
export interface SignInStack {
  gateway: RunningService<GatewayConfig>;
  settings: RunningService<SettingsConfig>;
  adminToken: string;
  namespace: string;
  /** Everything the gateway logged (level debug), to check that no password is ever written. */
  log: LogCapture;
  call(method: string, path: string, options?: CallOptions): Promise<CallResult>;
  /** PATCH the general settings as the admin; fails the test unless it answers 200. */
  patchSettings(body: Record<string, unknown>): Promise<void>;
  /** Another gateway replica on the same database, with its own environment overrides. */
  replica(env: Record<string, string>): Promise<RunningService<GatewayConfig>>;
  stop(): Promise<void>;
}

export async function startSignInStack(gatewayEnv: Record<string, string> = {}): Promise<SignInStack> {
  const namespace = uniqueName('signin');
  const settings = await startService(
    settingsService,
    loadConfig(settingsEnvSchema, testEnv('settings', { BROKER_NAMESPACE: namespace })),
  );
  await settings.started;
  const adminToken = `pack_${randomBytes(32).toString('base64url')}`;
  const env = testEnv('gateway', {
    BROKER_NAMESPACE: namespace,
    SETTINGS_URL: settings.url,
    PACK_ADMIN_TOKEN: adminToken,
    ...gatewayEnv,
  });
  const log = new LogCapture();
  const gateway = await startService(
    gatewayService,
    loadConfig(gatewayEnvSchema, { ...env, LOG_LEVEL: 'debug' }),
    {
      logDestination: log,
    },
  );
  await gateway.started;
  const replicas: RunningService<GatewayConfig>[] = [];
  const stack: SignInStack = {
    gateway,
    settings,
    adminToken,
    namespace,
    log,
    call: (method, path, options = {}) =>
      call(gateway.url, method, path, {
        ...options,
        token: options.token === undefined ? adminToken : options.token,
      }),
    async patchSettings(body) {
      const answer = await stack.call('PATCH', '/v1/core/general_settings/', { body });
      if (answer.status !== 200) throw new Error(`PATCH settings answered ${answer.status}: ${answer.text}`);
    },
    async replica(extra) {
      const replica = await startService(gatewayService, loadConfig(gatewayEnvSchema, { ...env, ...extra }));
      await replica.started;
      replicas.push(replica);
      return replica;
    },
    async stop() {
      for (const replica of replicas) await replica.stop();
      await stopAndClean(gateway);
      await stopAndClean(settings);
    },
  };
  return stack;
}
