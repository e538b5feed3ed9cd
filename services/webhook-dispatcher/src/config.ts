import { z } from 'zod';
import { serviceEnvSchema } from '@pack/config';
import type { TargetPolicy } from '@pack/net-guard';
import { withEncryptionEnv } from '@pack/secrets';

const ms = (fallback: number, min = 1) => z.coerce.number().int().min(min).default(fallback);

/** The base service variables, the key ring (webhook secrets) and the delivery tuning knobs. */
export const webhookDispatcherEnvSchema = withEncryptionEnv(
  serviceEnvSchema({ port: 8085, database: 'pack_webhook_dispatcher' }).extend({
    /** The settings service: rate limits and retention are read from it and applied live. */
    SETTINGS_URL: z.url({ protocol: /^https?$/ }).default('http://127.0.0.1:8082'),
    /** The catalog: a manual trigger about a Change Instance reads its state there. */
    CATALOG_URL: z.url({ protocol: /^https?$/ }).default('http://127.0.0.1:8081'),
    /** Requests to targets in flight per replica; up to 10x as many results may be being written. */
    WEBHOOK_CONCURRENCY: ms(50),
    /** How often due fires are looked for when no local timer is due sooner. */
    WEBHOOK_POLL_MS: ms(250),
    /** A claimed fire belongs to its replica this long; after it, another replica retries it. */
    WEBHOOK_LEASE_MS: ms(30_000, 1000),
    /** Per attempt: time to headers and time between body chunks. */
    WEBHOOK_TIMEOUT_MS: ms(10_000, 100),
    /** Attempts in all before a fire is FAILED. */
    WEBHOOK_MAX_ATTEMPTS: ms(5),
    /** Retry backoff: doubles from this base, with jitter. */
    WEBHOOK_RETRY_BASE_MS: ms(1_000),
    /** The backoff's cap; a target's Retry-After is honoured up to it. */
    WEBHOOK_RETRY_MAX_MS: ms(60_000),
    /** The window webhook_rate_limit_per_minute counts in (tests shorten it). */
    WEBHOOK_RATE_WINDOW_MS: ms(60_000, 100),
    /** How often replicas trim responses beyond the retention of webhooks they delivered for. */
    WEBHOOK_RETENTION_SWEEP_MS: ms(1_000, 50),
    /**
     * How long a replica keeps a Service's enabled webhooks for the events it consumes; writes
     * are announced to every replica at once, this bounds staleness when an announcement is
     * lost (docs/decisions/0031). 0 disables the cache.
     */
    WEBHOOK_LOOKUP_CACHE_MS: z.coerce.number().int().min(0).max(300_000).default(5000),
    /** Recoveries this replica works on at once; 0: it runs none, others do. */
    WEBHOOK_RECOVERY_CONCURRENCY: z.coerce.number().int().min(0).max(100).default(2),
    /** FAILED fires a recovery reads at once (then resent in steps of the free delivery slots). */
    WEBHOOK_RECOVERY_BATCH: ms(500),
    /** A recovery belongs to its replica this long after each step; then another takes over. */
    WEBHOOK_RECOVERY_LEASE_MS: ms(30_000, 1000),
    /** How often replicas look for recoveries nobody holds. */
    WEBHOOK_RECOVERY_POLL_MS: ms(2_000, 50),
    /** A webhook's breaker opens above this percentage of failed calls. */
    WEBHOOK_BREAKER_THRESHOLD: ms(50),
    /** Calls a breaker counts before it may open. */
    WEBHOOK_BREAKER_VOLUME: ms(10),
    /** How long an open breaker stays open before it tries the target again. */
    WEBHOOK_BREAKER_RESET_MS: ms(30_000, 100),
  }),
);
export type WebhookDispatcherConfig = z.infer<typeof webhookDispatcherEnvSchema>;

/**
 * Service owners set webhook targets: only public addresses by default (WEBHOOK_TARGET_RULE of
 * the contracts), and a refusal names what an operator sets, and where.
 */
export function webhookTargetPolicy(config: WebhookDispatcherConfig): TargetPolicy {
  return {
    allowed: config.PACK_ALLOWED_TARGET_CIDRS,
    remedy:
      'webhook targets may reach it only if PACK_ALLOWED_TARGET_CIDRS of the webhook-dispatcher service names its range',
  };
}
