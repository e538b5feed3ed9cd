import { loadConfig } from '@pack/config';
import { startService, type RunningService } from '@pack/runtime';
import {
  startHarness,
  startReplicaPair,
  type Companions,
  type Harness,
  type HarnessOptions,
  type ServiceKind,
} from '@pack/testkit';
import { gatewayEnvSchema, gatewayService, type GatewayConfig } from '../src/service';

type Running = RunningService<GatewayConfig>;

/**
 * The gateway in this process, on its own database. Each test points SETTINGS_URL and the
 * upstream URLs at what it needs (a fake settings service it shapes, an upstream it records).
 */
export const gatewayKind: ServiceKind<Running, Companions, object, HarnessOptions> = {
  name: 'gateway',
  start: (env, options) => startService(gatewayService, loadConfig(gatewayEnvSchema, env), options),
  extend: () => ({}),
};

export type GatewayHarness = Harness<Running, Companions, object, HarnessOptions>;

export const startGateway = (options: HarnessOptions = {}): Promise<GatewayHarness> =>
  startHarness(gatewayKind, options);

/** Two replicas on one database starting at once, as in a Kubernetes Deployment. */
export const startGatewayPair = (options: HarnessOptions = {}): Promise<[GatewayHarness, GatewayHarness]> =>
  startReplicaPair(gatewayKind, options);
