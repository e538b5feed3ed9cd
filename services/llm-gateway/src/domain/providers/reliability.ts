import {
  backoffMs as kitBackoffMs,
  KeyedBreakers,
  retry,
  type BreakerOptions,
  type BreakerState,
  type RetryPolicy,
} from '@pack/reliability';
import { PROVIDER_ATTEMPTS, PROVIDER_BACKOFF_MAX_MS } from '@pack/contracts';
import { ProviderError, ProviderHttpError, ProviderNetworkError } from '@pack/llm-providers';

/** The attempts and waits the API documents (and the gateway's route limit counts on). */
export const DEFAULT_RETRY_POLICY: RetryPolicy = {
  maxAttempts: PROVIDER_ATTEMPTS,
  baseDelayMs: 200,
  maxDelayMs: PROVIDER_BACKOFF_MAX_MS,
};

/**
 * Network errors, 429 and 5xx may pass on a second try; any other 4xx, an error body or an empty
 * reply will not, and a timeout already spent the model's whole budget for one attempt. A target
 * the URL guard refused stays refused: it is the model's configuration, not the provider's health.
 */
export function isRetryable(error: unknown): boolean {
  if (error instanceof ProviderHttpError) return error.status === 429 || error.status >= 500;
  return error instanceof ProviderNetworkError && error.code !== TARGET_REFUSED;
}

const TARGET_REFUSED = 'TARGET_REFUSED';

/** Exponential backoff with full jitter; a Retry-After within the cap is honoured as a floor. */
export function backoffMs(policy: RetryPolicy, retry: number, error: unknown, random = Math.random): number {
  return kitBackoffMs(policy, retry, { jitter: 'full', retryAfterSeconds: retryAfterOf(error), random });
}

const retryAfterOf = (error: unknown) => (error instanceof ProviderHttpError ? error.retryAfter : undefined);

/** Runs `attempt` until it succeeds, fails for good, or the attempts run out. */
export function withRetries<T>(
  attempt: () => Promise<T>,
  policy: RetryPolicy,
  onRetry: (error: unknown, delayMs: number) => void = () => {},
): Promise<{ value: T; attempts: number }> {
  return retry(() => attempt(), { policy, jitter: 'full', retryable: isRetryable, retryAfterOf, onRetry });
}

export type { BreakerState, RetryPolicy };

/** Rejection of a call while the model's breaker is open: the provider is not called. */
export class BreakerOpenError extends Error {}

export const DEFAULT_BREAKER_OPTIONS: BreakerOptions = {
  errorThresholdPercentage: 50,
  volumeThreshold: 5,
  resetTimeoutMs: 30_000,
};

const isTimeout = (error: unknown) => error instanceof ProviderError && error.kind === 'timeout';

/**
 * One opossum circuit breaker per model id. Only failures that say the provider is unwell
 * (network, timeout, 429, 5xx) count; a 400 or an empty reply says nothing about its health.
 * The adapters bound each attempt themselves, so opossum's own timeout is off.
 */
export class Breakers extends KeyedBreakers<number> {
  constructor(
    options: BreakerOptions = DEFAULT_BREAKER_OPTIONS,
    onState: (modelId: number, state: BreakerState) => void = () => {},
  ) {
    super({
      ...options,
      errorFilter: (error: unknown) => !isRetryable(error) && !isTimeout(error),
      openError: () =>
        new BreakerOpenError('the circuit breaker of this model is open after repeated provider failures'),
      onState,
    });
  }
}
