import { loadConfig, type ServiceEnv } from '@pack/config';
import { catalogEnvSchema, catalogService } from '@pack/catalog';
import { gatewayEnvSchema, gatewayService, type GatewayConfig } from '@pack/gateway';
import { llmGatewayEnvSchema, llmGatewayService } from '@pack/llm-gateway';
import { orchestratorEnvSchema, orchestratorService } from '@pack/pipeline-orchestrator';
import { startService, type RunningService } from '@pack/runtime';
import { settingsEnvSchema, settingsService, type SettingsConfig } from '@pack/settings';
import type { Companions, Harness, HarnessOptions, ServiceKind } from '@pack/testkit';
import { webhookDispatcherEnvSchema, webhookDispatcherService } from '@pack/webhook-dispatcher';

/**
 * The services as the end-to-end tests start them: each a ServiceKind of the test kit's harness
 * (packages/testkit/src/harness.ts), the one way tests start services. The e2e stack
 * (test/stack.ts) and the sign-in stack (test/sign-in/harness.ts) are built from these.
 */
export type PlainKind<C extends ServiceEnv> = ServiceKind<
  RunningService<C>,
  Companions,
  object,
  HarnessOptions
>;
export type PlainHarness<C extends ServiceEnv> = Harness<
  RunningService<C>,
  Companions,
  object,
  HarnessOptions
>;

const kind = <C extends ServiceEnv>(
  name: string,
  start: (env: Record<string, string>, options: HarnessOptions) => Promise<RunningService<C>>,
): PlainKind<C> => ({
  name,
  start,
  extend: () => ({}),
});

export const settingsKind = kind<SettingsConfig>('settings', (env, { logDestination }) =>
  startService(settingsService, loadConfig(settingsEnvSchema, env), { logDestination }),
);
export const catalogKind = kind('catalog', (env, { logDestination }) =>
  startService(catalogService, loadConfig(catalogEnvSchema, env), { logDestination }),
);
export const llmGatewayKind = kind('llm-gateway', (env, { logDestination }) =>
  startService(llmGatewayService, loadConfig(llmGatewayEnvSchema, env), { logDestination }),
);
export const orchestratorKind = kind('pipeline-orchestrator', (env, { logDestination }) =>
  startService(orchestratorService, loadConfig(orchestratorEnvSchema, env), { logDestination }),
);
export const webhookDispatcherKind = kind('webhook-dispatcher', (env, { logDestination }) =>
  startService(webhookDispatcherService, loadConfig(webhookDispatcherEnvSchema, env), { logDestination }),
);
export const gatewayKind = kind<GatewayConfig>('gateway', (env, { logDestination }) =>
  startService(gatewayService, loadConfig(gatewayEnvSchema, env), { logDestination }),
);
