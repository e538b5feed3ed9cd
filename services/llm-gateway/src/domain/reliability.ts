import CircuitBreaker from 'opossum';
import { ProviderError, ProviderHttpError, ProviderNetworkError } from '@pack/llm-providers';

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

export type BreakerState = 'closed' | 'open' | 'half_open';

/** Rejection of a call while the model's breaker is open: the provider is not called. */
export class BreakerOpenError extends Error {}

export interface BreakerOptions {
  /** Failures (in percent of calls in the window) that open the breaker. */
  errorThresholdPercentage: number;
  /** Calls in the window before the breaker may open. */
  volumeThreshold: number;
  /** Open this long, then one trial call (half open). */
  resetTimeoutMs: number;
}

export const DEFAULT_BREAKER_OPTIONS: BreakerOptions = {
  errorThresholdPercentage: 50,
  volumeThreshold: 5,
  resetTimeoutMs: 30_000,
};

/**
 * One opossum circuit breaker per model id. Only failures that say the provider is unwell
 * (network, timeout, 429, 5xx) count; a 400 or an empty reply says nothing about its health.
 * The adapters bound each attempt themselves, so opossum's own timeout is off.
 */
export class Breakers {
  private readonly byModel = new Map<number, CircuitBreaker>();

  constructor(
    private readonly options: BreakerOptions = DEFAULT_BREAKER_OPTIONS,
    private readonly onState: (modelId: number, state: BreakerState) => void = () => {},
  ) {}

  async run<T>(modelId: number, attempt: () => Promise<T>): Promise<T> {
    const breaker = this.breakerOf(modelId);
    try {
      return (await breaker.fire(attempt)) as T;
    } catch (error) {
      if ((error as { code?: string }).code === 'EOPENBREAKER')
        throw new BreakerOpenError(
          'the circuit breaker of this model is open after repeated provider failures',
        );
      throw error;
    }
  }

  /**
   * A connection test: counted by the breaker like any call while it is closed, but sent to the
   * provider even while it is open (an admin checking a fixed key must not be told "open" without
   * the provider being asked). `closes`: a success closes an open breaker (the stored model was
   * tested, so it works again).
   */
  async probe<T>(modelId: number, attempt: () => Promise<T>, closes: boolean): Promise<T> {
    const breaker = this.breakerOf(modelId);
    if (!breaker.opened) return this.run(modelId, attempt);
    const value = await attempt();
    if (closes) breaker.close();
    return value;
  }

  state(modelId: number): BreakerState {
    const breaker = this.byModel.get(modelId);
    if (!breaker) return 'closed';
    return breaker.opened ? 'open' : breaker.halfOpen ? 'half_open' : 'closed';
  }

  shutdown(): void {
    for (const breaker of this.byModel.values()) breaker.shutdown();
    this.byModel.clear();
  }

  private breakerOf(modelId: number): CircuitBreaker {
    let breaker = this.byModel.get(modelId);
    if (breaker) return breaker;
    breaker = new CircuitBreaker((attempt: () => Promise<unknown>) => attempt(), {
      timeout: false,
      errorThresholdPercentage: this.options.errorThresholdPercentage,
      volumeThreshold: this.options.volumeThreshold,
      resetTimeout: this.options.resetTimeoutMs,
      errorFilter: (error: unknown) => !isRetryable(error) && !isTimeout(error),
    });
    const report = () => this.onState(modelId, this.state(modelId));
    breaker.on('open', report);
    breaker.on('halfOpen', report);
    breaker.on('close', report);
    this.byModel.set(modelId, breaker);
    this.onState(modelId, 'closed');
    return breaker;
  }
}

const isTimeout = (error: unknown) => error instanceof ProviderError && error.kind === 'timeout';
