import { readFileSync } from 'node:fs';
import { parseAllowedCidrs } from '@pack/net-guard';
import { z } from 'zod';

export type Env = Record<string, string | undefined>;

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n  ${problems.join('\n  ')}`);
    this.name = 'ConfigError';
  }
}

/**
 * Resolves `<NAME>_FILE` variants (Kubernetes secrets mounted as files): when `NAME` is unset and
 * `NAME_FILE` names a file, its content (trailing newline removed) becomes the value of `NAME`.
 */
function resolveFileVariants(keys: string[], env: Env, problems: string[]): Env {
  const resolved: Env = { ...env };
  for (const key of keys) {
    const file = env[`${key}_FILE`];
    if (resolved[key] !== undefined || !file) continue;
    try {
      resolved[key] = readFileSync(file, 'utf8').replace(/\r?\n$/, '');
    } catch (error) {
      problems.push(`${key}_FILE: cannot read ${file} (${(error as NodeJS.ErrnoException).code ?? 'error'})`);
    }
  }
  return resolved;
}

/** Validates the environment against a schema; throws a ConfigError naming every bad variable. */
export function loadConfig<S extends z.ZodObject>(schema: S, env: Env = process.env): z.infer<S> {
  const problems: string[] = [];
  const resolved = resolveFileVariants(Object.keys(schema.shape), env, problems);
  // Empty strings count as unset, so `FOO=` falls back to the default instead of failing.
  const input = Object.fromEntries(
    Object.keys(schema.shape).map((key) => [key, resolved[key] === '' ? undefined : resolved[key]]),
  );
  const result = schema.safeParse(input);
  if (!result.success) {
    for (const issue of result.error.issues) problems.push(`${issue.path.join('.')}: ${issue.message}`);
  }
  if (problems.length > 0 || !result.success) throw new ConfigError(problems);
  return result.data;
}

/** Like loadConfig, but a bad value stops the process with a message naming the variable. */
export function loadConfigOrExit<S extends z.ZodObject>(schema: S, env: Env = process.env): z.infer<S> {
  try {
    return loadConfig(schema, env);
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    process.stderr.write(`${error.message}\n`);
    process.exit(78); // EX_CONFIG
  }
}

export const envBoolean = z
  .enum(['true', 'false', '1', '0'])
  .transform((value) => value === 'true' || value === '1');

/**
 * Variables every service reads. Each service extends this with its own. The metrics listener's
 * port defaults to the service port plus 1000 (8080 -> 9080, ... 8085 -> 9085; docs/decisions/0020).
 */
export function serviceEnvSchema(defaults: { port: number; database: string; metricsPort?: number }) {
  return z.object({
    /** `production` in the image; `development` and `test` change nothing the services do. */
    NODE_ENV: z.enum(['development', 'test', 'production']).default('development'),
    /** The lowest level logged (pino JSON lines on stdout). */
    LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
    /** The address both listeners bind (the image sets `0.0.0.0`). */
    HOST: z.string().default('127.0.0.1'),
    /** The service's HTTP port (the gateway's: `GATEWAY_PORT` when set). */
    PORT: z.coerce.number().int().min(0).max(65535).default(defaults.port),
    /** Internal listener for /metrics, /healthz and /readyz (scraped by Prometheus, never published). */
    METRICS_PORT: z.coerce
      .number()
      .int()
      .min(0)
      .max(65535)
      .default(defaults.metricsPort ?? defaults.port + 1000),
    /** The MongoDB or FerretDB server. */
    MONGO_URL: z
      .string()
      .regex(/^mongodb(\+srv)?:\/\//, 'must be a mongodb:// URL')
      .default('mongodb://pack:pack@127.0.0.1:27017/?authMechanism=PLAIN'),
    /** The service's own database on that server. */
    MONGO_DB: z
      .string()
      .regex(/^[A-Za-z0-9_-]+$/)
      .default(defaults.database),
    /** RabbitMQ: one URL, or a cluster's nodes separated by commas, tried in turn (decision 0049). */
    AMQP_URL: z
      .string()
      .regex(
        /^amqps?:\/\/[^,\s]+(\s*,\s*amqps?:\/\/[^,\s]+)*$/,
        'must be an amqp:// URL, or several separated by commas',
      )
      .default('amqp://guest:guest@127.0.0.1:5672'),
    /** Prefix of the exchange and queue names, so several installations can share a broker. */
    BROKER_NAMESPACE: z
      .string()
      .regex(/^[a-z0-9_.-]+$/)
      .default('pack'),
    /** Signs the principal the gateway passes to the services; the same on every service. */
    PACK_INTERNAL_SECRET: z
      .string()
      .min(32, 'must be at least 32 characters (shared by the gateway and services)'),
    /** Larger request bodies are refused with 413. */
    BODY_LIMIT_BYTES: z.coerce
      .number()
      .int()
      .min(1024)
      .default(1024 * 1024),
    /**
     * On a stop, how long connections idle at that moment stay open: a client may be sending a
     * request on one just then (it cannot know), which is answered, and its connection closed
     * after it. 0 closes them at once.
     */
    SHUTDOWN_IDLE_GRACE_MS: z.coerce.number().int().min(0).max(10_000).default(1000),
    /**
     * How long a consumer remembers that it handled an event (idempotency markers). It must
     * outlast every redelivery: retries, a broker outage, an outbox relayed late.
     */
    PROCESSED_EVENTS_RETENTION_DAYS: z.coerce.number().int().min(1).max(365).default(7),
    /**
     * Ranges that outbound calls to user-configured URLs (providers, webhooks, the identity
     * provider) may reach although the address guard refuses them by default. Empty keeps the
     * defaults: webhooks reach public addresses only; models and the identity provider also
     * reach loopback and private networks; link-local and metadata addresses need a range here.
     */
    PACK_ALLOWED_TARGET_CIDRS: z
      .string()
      .default('')
      .transform((value, ctx) => {
        try {
          return parseAllowedCidrs(value);
        } catch (error) {
          ctx.addIssue({ code: 'custom', message: (error as Error).message });
          return z.NEVER;
        }
      }),
  });
}
export type ServiceEnv = z.infer<ReturnType<typeof serviceEnvSchema>>;
