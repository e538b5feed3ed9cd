import { z } from 'zod';
import { serviceEnvSchema } from '@pack/config';

/**
 * The base service variables, the settings service (generative UI catalog, currency, charges)
 * and the stage timeout sweeper (docs/decisions/0028).
 */
export const orchestratorEnvSchema = serviceEnvSchema({
  port: 8084,
  database: 'pack_pipeline_orchestrator',
}).extend({
  SETTINGS_URL: z.url({ protocol: /^https?$/ }).default('http://127.0.0.1:8082'),
  PIPELINE_SWEEP_INTERVAL_MS: z.coerce.number().int().min(50).max(600_000).default(5000),
  PIPELINE_STAGE_TIMEOUT_MARGIN_MS: z.coerce.number().int().min(0).max(3_600_000).default(60_000),
  /** How long a replica may remember a Service's active processor for the next stage (0: never). */
  PIPELINE_PROCESSOR_CACHE_MS: z.coerce.number().int().min(0).max(600_000).default(5000),
});
export type OrchestratorConfig = z.infer<typeof orchestratorEnvSchema>;
