import { z } from 'zod';
import { envBoolean, serviceEnvSchema } from '@pack/config';
import { PRIVATE_NETWORK_KINDS, type TargetPolicy } from '@pack/net-guard';
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
   * renewal (docs/decisions/0018, "Crashes"). A replica cut from the database this long is taken
   * for crashed too, and its call may be made again: set it above the database outages you expect.
   */
  LLM_CALL_LEASE_MS: z.coerce.number().int().min(300).max(600_000).default(15_000),
  /**
   * How long a finished call's record waits for others' records to share one insert; its result
   * is published once it is stored, so an idle gateway's results wait this long (0052). 0: at
   * once, or with any others that came during that write.
   */
  RECORD_LINGER_MS: z.coerce.number().int().min(0).max(1000).default(0),
  /**
   * How long a finished call's rollup waits for others' to share one update; it goes after the
   * result, and the request is acknowledged without waiting for it (docs/decisions/0063).
   */
  ROLLUP_LINGER_MS: z.coerce.number().int().min(0).max(1000).default(250),
  /** Generate requests one replica works on at once. */
  LLM_GENERATE_PREFETCH: z.coerce.number().int().min(1).max(1000).default(32),
  /**
   * Whether model URLs may reach private networks and loopback without naming a range: models
   * are an administrator's, often on the company network. Link-local and metadata addresses
   * still need a PACK_ALLOWED_TARGET_CIDRS range.
   */
  PACK_MODEL_PRIVATE_TARGETS: envBoolean.default(true),
});
export type LlmGatewayConfig = z.infer<typeof llmGatewayEnvSchema>;

/**
 * Where model URLs may point (MODEL_URL_RULE of the contracts), and what a refusal tells the
 * administrator to set, and where.
 */
export function modelTargetPolicy(config: LlmGatewayConfig): TargetPolicy {
  const allowed = config.PACK_ALLOWED_TARGET_CIDRS;
  const range = 'PACK_ALLOWED_TARGET_CIDRS of the llm-gateway service';
  // Short: a refusal at call time is part of a provider error message, cut at 300 characters.
  return config.PACK_MODEL_PRIVATE_TARGETS
    ? {
        allowed,
        allowedKinds: PRIVATE_NETWORK_KINDS,
        remedy: `model URLs may reach it only if ${range} names its range`,
      }
    : { allowed, remedy: `set PACK_MODEL_PRIVATE_TARGETS=true or name its range in ${range}` };
}
