import type { z } from 'zod';
import { serviceEnvSchema } from '@pack/config';

/** The base service variables; the orchestrator keeps no secrets of its own (yet). */
export const orchestratorEnvSchema = serviceEnvSchema({ port: 8084, database: 'pack_pipeline_orchestrator' });
export type OrchestratorConfig = z.infer<typeof orchestratorEnvSchema>;
