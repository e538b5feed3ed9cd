/** How many attempts a call gets and how long it waits between them. */
export interface RetryPolicy {
  /** Attempts in all, the first included. */
  maxAttempts: number;
  /** First backoff in ms; doubles per retry. */
  baseDelayMs: number;
  /** No wait is longer, whatever Retry-After asks for. */
  maxDelayMs: number;
}

/**
 * How the exponential step is randomised: `full` waits between 0 and the step, `equal` between
 * half the step and the whole of it, `none` the step itself.
 */
export type Jitter = 'full' | 'equal' | 'none';

export interface BackoffOptions {
  jitter: Jitter;
  /** Seconds the other side asked for (Retry-After): a floor, within `maxDelayMs`. */
  retryAfterSeconds?: number | null;
  random?: () => number;
}

/** `base * 2^retry`, capped at `maxDelayMs` (`retry` counts from 0 for the first retry). */
export function exponentialMs(
  policy: Pick<RetryPolicy, 'baseDelayMs' | 'maxDelayMs'>,
  retry: number,
): number {
  return Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** retry);
}

/** `stepMs` randomised by `jitter`. */
export function jittered(stepMs: number, jitter: Jitter, random: () => number = Math.random): number {
  if (jitter === 'none') return stepMs;
  return jitter === 'full' ? stepMs * random() : stepMs * (0.5 + random() / 2);
}

/**
 * The wait before retry number `retry` (0 for the first retry): exponential with `jitter`; a
 * Retry-After within the cap is honoured as a floor, so the other side cannot park a call for
 * longer than `maxDelayMs`.
 */
export function backoffMs(
  policy: Pick<RetryPolicy, 'baseDelayMs' | 'maxDelayMs'>,
  retry: number,
  options: BackoffOptions,
): number {
  const delay = Math.round(jittered(exponentialMs(policy, retry), options.jitter, options.random));
  const retryAfter = options.retryAfterSeconds;
  if (retryAfter === undefined || retryAfter === null) return delay;
  return Math.min(policy.maxDelayMs, Math.max(delay, retryAfter * 1000));
}
