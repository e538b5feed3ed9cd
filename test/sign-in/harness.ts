import { randomBytes } from 'node:crypto';
import type { GatewayConfig } from '@pack/gateway';
import type { RunningService } from '@pack/runtime';
import type { SettingsConfig } from '@pack/settings';
import {
  call,
  LogCapture,
  startHarness,
  testEnv,
  uniqueName,
  type CallOptions,
  type CallResult,
} from '@pack/testkit';
import { gatewayKind, settingsKind, type PlainHarness } from '../kinds';

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

/** Both started by the test kit's harness (test/kinds.ts). */
export async function startSignInStack(gatewayEnv: Record<string, string> = {}): Promise<SignInStack> {
  const namespace = uniqueName('signin');
  const settings = await startHarness(settingsKind, { env: { BROKER_NAMESPACE: namespace } });
  const adminToken = `pack_${randomBytes(32).toString('base64url')}`;
  const env = testEnv('gateway', {
    BROKER_NAMESPACE: namespace,
    SETTINGS_URL: settings.url,
    PACK_ADMIN_TOKEN: adminToken,
    ...gatewayEnv,
  });
  const log = new LogCapture();
  const gateway = await startHarness(gatewayKind, {
    env: { ...env, LOG_LEVEL: 'debug' },
    logDestination: log,
  });
  const replicas: PlainHarness<GatewayConfig>[] = [];
  const stack: SignInStack = {
    gateway: gateway.service,
    settings: settings.service,
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
      // The gateway's environment without its debug level and log capture.
      const replica = await gateway.replica({ env: { LOG_LEVEL: env.LOG_LEVEL!, ...extra } });
      replicas.push(replica);
      return replica.service;
    },
    async stop() {
      // The last gateway instance to stop removes their database and queues.
      for (const replica of replicas) await replica.stop();
      await gateway.stop();
      await settings.stop();
    },
  };
  return stack;
}
