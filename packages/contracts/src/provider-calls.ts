import { z } from 'zod';

/** How long and how often a model's provider is called, and which models answer for it. */

/** The longest a model's timeout may be, in seconds. */
export const LLM_TIMEOUT_MAX_SECONDS = 600;
/** Provider calls of one request (the first and its retries after a 5xx, 429 or network error). */
export const PROVIDER_ATTEMPTS = 3;
/** The longest wait between two attempts (a Retry-After above it is cut to it). */
export const PROVIDER_BACKOFF_MAX_MS = 5_000;
/**
 * The longest a connection test may take: every attempt spending the model's whole timeout (a
 * timeout itself is not retried, so this bounds the worst case), plus the waits between them.
 * The gateway waits this long on that route, so it never answers 504 before the model would.
 */
export const connectionTestMaxMs = (timeoutSeconds = LLM_TIMEOUT_MAX_SECONDS): number =>
  PROVIDER_ATTEMPTS * timeoutSeconds * 1000 + (PROVIDER_ATTEMPTS - 1) * PROVIDER_BACKOFF_MAX_MS;

/** At most this many fallbacks per model (docs/decisions/0045). */
export const MAX_FALLBACK_MODELS = 3;
export const FALLBACK_NOTE =
  "Ordered ids of up to 3 other LLM models that answer a call this model cannot (breaker open, HTTP 429, 5xx, a timeout or a connection failure; not a 4xx any model would return for the same body), each with its own retries. No model twice, not the model itself, no cycle (A->B->A); every id must exist. A model that is another model's fallback cannot be deleted (409)";
export const fallbackModelsSchema = z
  .array(z.number().int().positive())
  .max(MAX_FALLBACK_MODELS)
  .refine((ids) => new Set(ids).size === ids.length, 'must not name a model twice')
  .describe(FALLBACK_NOTE);

/** A model's `timeout` field. */
export const timeoutSchema = z
  .number()
  .min(1)
  .max(LLM_TIMEOUT_MAX_SECONDS)
  .describe(
    `Seconds each provider request may take (1..${LLM_TIMEOUT_MAX_SECONDS}); no hop in front, the API gateway included, answers before it`,
  );
