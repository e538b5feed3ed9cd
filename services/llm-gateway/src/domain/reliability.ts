import { ProviderError, ProviderHttpError } from '@pack/llm-providers';

export interface RetryPolicy {
  /** Attempts in all, the first included. */
  maxAttempts: number;
  /** First backoff in ms; doubles per retry, full jitter. */
  baseDelayMs: number;
  /** No wait is longer, whatever Retry-After asks for. */
  maxDelayMs: number;
}

export const DEFAULT_RETRY_POLICY: RetryPolicy = { maxAttempts: 3, baseDelayMs: 200, maxDelayMs: 5_000 };

/**
 * Network errors, 429 and 5xx may pass on a second try; any other 4xx, an error body or an empty
 * reply will not, and a timeout already spent the model's whole budget for one attempt.
 */
export function isRetryable(error: unknown): boolean {
  if (error instanceof ProviderHttpError) return error.status === 429 || error.status >= 500;
  return error instanceof ProviderError && error.kind === 'network';
}

/** Exponential backoff with full jitter; a Retry-After within the cap is honoured as a floor. */
export function backoffMs(policy: RetryPolicy, retry: number, error: unknown, random = Math.random): number {
  const exponential = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** retry);
  const jittered = Math.round(exponential * random());
  const retryAfter = error instanceof ProviderHttpError ? error.retryAfter : undefined;
  if (retryAfter === undefined) return jittered;
  return Math.min(policy.maxDelayMs, Math.max(jittered, retryAfter * 1000));
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Runs `attempt` until it succeeds, fails for good, or the attempts run out. */
export async function withRetries<T>(
  attempt: () => Promise<T>,
  policy: RetryPolicy,
  onRetry: (error: unknown, delayMs: number) => void = () => {},
): Promise<{ value: T; attempts: number }> {
  for (let n = 1; ; n += 1) {
    try {
      return { value: await attempt(), attempts: n };
    } catch (error) {
      if (n >= policy.maxAttempts || !isRetryable(error)) throw error;
      const delay = backoffMs(policy, n - 1, error);
      onRetry(error, delay);
      await sleep(delay);
    }
  }
}
