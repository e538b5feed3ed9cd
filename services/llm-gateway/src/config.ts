import { z } from 'zod';
import { serviceEnvSchema } from '@pack/config';
import { withEncryptionEnv } from '@pack/secrets';

/** The base service variables and the encryption key ring (provider secrets in extra_data). */
export const llmGatewayEnvSchema = withEncryptionEnv(
  serviceEnvSchema({ port: 8083, database: 'pack_llm_gateway' }),
).extend({
  /** The settings service: Currency and Charges Settings, applied live. */
  SETTINGS_URL: z.url({ protocol: /^https?$/ }).default('http://127.0.0.1:8082'),
  /** How long a replica keeps a model profile for generation; bounds staleness across replicas. */
  LLM_MODEL_CACHE_MS: z.coerce.number().int().min(0).max(300_000).default(5000),
  /**
   * How long a replica's claim on a generate request lasts without renewal; renewed every third of
   * it while the call runs, so a crashed replica's request is taken over this long after its last
   * renewal (docs/decisions/0018, "Crashes").
   */
  LLM_CALL_LEASE_MS: z.coerce.number().int().min(300).max(600_000).default(15_000),
  /**
   * How long a finished call's records (the call record, the rollups) wait for other calls' to
   * share one write; the result is published before, the request acknowledged after (0052). 0:
   * at once, or with the others that came during a write.
   */
  RECORD_LINGER_MS: z.coerce.number().int().min(0).max(1000).default(0),
  /** Generate requests one replica works on at once. */
  LLM_GENERATE_PREFETCH: z.coerce.number().int().min(1).max(1000).default(32),
});
export type LlmGatewayConfig = z.infer<typeof llmGatewayEnvSchema>;
