import { backoffMs, parseRetryAfter, type RetryPolicy } from '@pack/reliability';

/** What one attempt's result means for the fire. */
export type AttemptVerdict = 'ok' | 'retry' | 'failed' | 'gone';

/**
 * 2xx is OK. 410 Gone means the receiver is gone for good: the webhook is disabled. Network
 * errors, timeouts, 429 and 5xx may pass later and are retried. Any 3xx fails (redirects are not
 * followed: they could lead past the address checks), as does any other 4xx.
 */
export function verdictOf(status: number | null): AttemptVerdict {
  if (status === null) return 'retry';
  if (status >= 200 && status < 300) return 'ok';
  if (status === 410) return 'gone';
  if (status === 429 || status >= 500) return 'retry';
  return 'failed';
}

export type { RetryPolicy };
/** Retry-After as seconds (`@pack/reliability`): a number of seconds or an HTTP date; null when absent or unreadable. */
export { parseRetryAfter };

/**
 * Exponential backoff after attempt `attempt` (1-based), with equal jitter: a random delay between
 * half the exponential step and the whole of it. A Retry-After (seconds) is honoured as a floor,
 * within the cap: a receiver cannot park a fire for hours.
 */
export function retryDelayMs(
  policy: RetryPolicy,
  attempt: number,
  retryAfterSeconds: number | null,
  random: () => number = Math.random,
): number {
  return backoffMs(policy, attempt - 1, { jitter: 'equal', retryAfterSeconds, random });
}

/** The body kept on a response: at most `limit` characters. */
export function truncate(text: string, limit: number): { text: string; truncated: boolean } {
  return text.length > limit ? { text: text.slice(0, limit), truncated: true } : { text, truncated: false };
}
