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
  /** The settings service: the generative UI catalog, Currency, Charges and the AI switches. */
  SETTINGS_URL: z.url({ protocol: /^https?$/ }).default('http://127.0.0.1:8082'),
  /** The catalog, asked for a Service whose event the projections have not received yet. */
  CATALOG_URL: z.url({ protocol: /^https?$/ }).default('http://127.0.0.1:8081'),
  /** The llm-gateway, asked for a model whose event the projections have not received yet. */
  LLM_GATEWAY_URL: z.url({ protocol: /^https?$/ }).default('http://127.0.0.1:8083'),
  /** How often every replica sweeps for stages past their deadline (and kicks its outbox relay). */
  PIPELINE_SWEEP_INTERVAL_MS: z.coerce.number().int().min(50).max(600_000).default(5000),
  /** Added once to a stage's deadline: every attempt of its call (and its fallbacks') plus this. */
  PIPELINE_STAGE_TIMEOUT_MARGIN_MS: z.coerce.number().int().min(0).max(3_600_000).default(60_000),
  /**
   * Provider attempts a stage's call may make before the sweeper fails it (the llm-gateway's 3
   * attempts per call, times 2 calls with a structured re-ask), each the model's timeout plus
   * `PIPELINE_STAGE_BACKOFF_MS` (its backoff cap).
   */
  PIPELINE_STAGE_CALL_ATTEMPTS: z.coerce.number().int().min(1).max(100).default(6),
  /** The backoff allowed between those attempts. */
  PIPELINE_STAGE_BACKOFF_MS: z.coerce.number().int().min(0).max(600_000).default(5000),
  /** A running stage with no result this long after its request went out has it sent again. */
  PIPELINE_STAGE_RESEND_MS: z.coerce.number().int().min(100).max(3_600_000).default(30_000),
  /** At most this many copies per stage request (0: never resend). */
  PIPELINE_STAGE_MAX_RESENDS: z.coerce.number().int().min(0).max(100).default(3),
  /**
   * How long a stage result's records beside its move (the PackData history entry, the AI budget
   * count) wait for other results' to share one write; the result's message is acknowledged
   * after them (docs/decisions/0052). 0: at once, or with the others that came during a write.
   */
  RECORD_LINGER_MS: z.coerce.number().int().min(0).max(1000).default(0),
  /**
   * How long a replica may remember a Service's active processor for the next stage and an
   * approval's first (an approval trusts only a remembered processor, never a remembered
   * "none"), and a model's name for a new run's context (0: never).
   */
  PIPELINE_PROCESSOR_CACHE_MS: z.coerce.number().int().min(0).max(600_000).default(5000),
});
export type OrchestratorConfig = z.infer<typeof orchestratorEnvSchema>;
