import { z } from 'zod';
import { serviceEnvSchema } from '@pack/config';

/** The base service variables and the settings service (generative UI catalog, currency, charges). */
export const orchestratorEnvSchema = serviceEnvSchema({
  port: 8084,
  database: 'pack_pipeline_orchestrator',
}).extend({
  SETTINGS_URL: z.url({ protocol: /^https?$/ }).default('http://127.0.0.1:8082'),
});
export type OrchestratorConfig = z.infer<typeof orchestratorEnvSchema>;
