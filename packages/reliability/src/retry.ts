import { backoffMs, type Jitter, type RetryPolicy } from './backoff';

export interface RetryOptions {
  policy: RetryPolicy;
  jitter: Jitter;
  /** False: the error is thrown at once (it will not pass on a second try). */
  retryable: (error: unknown) => boolean;
  /** Seconds the error asks to wait (a Retry-After it carries). */
  retryAfterOf?: (error: unknown) => number | null | undefined;
  onRetry?: (error: unknown, delayMs: number) => void;
  sleep?: (ms: number) => Promise<void>;
  random?: () => number;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Runs `attempt` until it succeeds, fails for good, or the attempts run out. */
export async function retry<T>(
  attempt: (n: number) => Promise<T>,
  options: RetryOptions,
): Promise<{ value: T; attempts: number }> {
  for (let n = 1; ; n += 1) {
    try {
      return { value: await attempt(n), attempts: n };
    } catch (error) {
      if (n >= options.policy.maxAttempts || !options.retryable(error)) throw error;
      const delay = backoffMs(options.policy, n - 1, {
        jitter: options.jitter,
        retryAfterSeconds: options.retryAfterOf?.(error),
        random: options.random,
      });
      options.onRetry?.(error, delay);
      await (options.sleep ?? sleep)(delay);
    }
  }
}
