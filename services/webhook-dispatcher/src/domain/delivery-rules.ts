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

export interface RetryPolicy {
  maxAttempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
}

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
  const exponential = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** (attempt - 1));
  const jittered = Math.round(exponential * (0.5 + random() / 2));
  if (retryAfterSeconds === null) return jittered;
  return Math.min(policy.maxDelayMs, Math.max(jittered, retryAfterSeconds * 1000));
}

/** Retry-After as seconds: a number of seconds or an HTTP date; null when absent or unreadable. */
export function parseRetryAfter(value: string | undefined, now = Date.now()): number | null {
  if (!value) return null;
  if (/^\d+$/.test(value.trim())) return Number(value.trim());
  const date = Date.parse(value);
  return Number.isNaN(date) ? null : Math.max(0, Math.ceil((date - now) / 1000));
}

/** The body kept on a response: at most `limit` characters. */
export function truncate(text: string, limit: number): { text: string; truncated: boolean } {
  return text.length > limit ? { text: text.slice(0, limit), truncated: true } : { text, truncated: false };
}
