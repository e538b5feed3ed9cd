import { z } from 'zod';
import { loadConfig, serviceEnvSchema, type Env } from '@pack/config';

const url = (port: number) => z.url({ protocol: /^https?$/ }).default(`http://127.0.0.1:${port}`);

export const gatewayEnvSchema = serviceEnvSchema({ port: 8080, database: 'pack_gateway' }).extend({
  /** Overrides PORT for the gateway only (DESIGN section 12). */
  GATEWAY_PORT: z.coerce.number().int().min(0).max(65535).optional(),
  /** Token of the first admin user, created at start if absent. */
  PACK_ADMIN_TOKEN: z.string().min(32, 'must be at least 32 characters').optional(),
  PACK_ADMIN_USERNAME: z.string().min(1).default('admin'),
  CATALOG_URL: url(8081),
  SETTINGS_URL: url(8082),
  LLM_GATEWAY_URL: url(8083),
  PIPELINE_ORCHESTRATOR_URL: url(8084),
  WEBHOOK_DISPATCHER_URL: url(8085),
  UPSTREAM_TIMEOUT_MS: z.coerce.number().int().min(100).max(600_000).default(30_000),
  /** How often revocations are picked up from the database by every replica. */
  REVOCATION_POLL_MS: z.coerce.number().int().min(50).max(10_000).default(500),
});

export type GatewayConfig = z.infer<typeof gatewayEnvSchema>;

export function gatewayConfig(env: Env = process.env): GatewayConfig {
  const config = loadConfig(gatewayEnvSchema, env);
  return { ...config, PORT: config.GATEWAY_PORT ?? config.PORT };
}
