import CircuitBreaker from 'opossum';

export type BreakerState = 'closed' | 'open' | 'half_open';

export interface BreakerOptions {
  /** Failures (in percent of calls in the window) that open the breaker. */
  errorThresholdPercentage: number;
  /** Calls in the window before the breaker may open. */
  volumeThreshold: number;
  /** Open this long, then one trial call (half open). */
  resetTimeoutMs: number;
}

export interface KeyedBreakerOptions<K> extends BreakerOptions {
  /** True: this error says nothing about the target's health and is not counted. */
  errorFilter?: (error: unknown) => boolean;
  /** What a call rejected by an open breaker throws. */
  openError: (key: K) => Error;
  onState?: (key: K, state: BreakerState) => void;
  /**
   * Breakers kept at most (default 1000): a new key evicts the least recently used closed one.
   * Open and half-open breakers are never evicted (forgetting one would let calls through to a
   * target that is down), so while more than this many are open the map holds them all.
   */
  maxKeys?: number;
}

/** Breakers kept unless told (models and webhook targets in use at once are far fewer). */
export const DEFAULT_MAX_BREAKER_KEYS = 1000;

/**
 * One opossum circuit breaker per key (a model, a webhook target), per replica, made on first
 * use. Callers bound each attempt themselves, so opossum's own timeout is off. Every change of
 * state (and the first, closed) is reported to `onState`. At most `maxKeys` are kept: a closed
 * breaker not used for longest makes room (it is shut down; made again, closed, when its key
 * comes back).
 */
export class KeyedBreakers<K> {
  private readonly byKey = new Map<K, CircuitBreaker>();

  constructor(private readonly options: KeyedBreakerOptions<K>) {}

  get resetTimeoutMs(): number {
    return this.options.resetTimeoutMs;
  }

  /** `call` through the key's breaker; rejected with `openError` while it is open. */
  async run<T>(key: K, call: () => Promise<T>): Promise<T> {
    const breaker = this.breakerOf(key);
    try {
      return (await breaker.fire(call)) as T;
    } catch (error) {
      if ((error as { code?: string }).code === 'EOPENBREAKER') throw this.options.openError(key);
      throw error;
    }
  }

  /**
   * Counted like any call while the breaker is closed, but made even while it is open (a check
   * asked for by a person is not answered "open" without the target being asked). `closes`: a
   * success closes an open breaker.
   */
  async probe<T>(key: K, call: () => Promise<T>, closes: boolean): Promise<T> {
    const breaker = this.breakerOf(key);
    if (!breaker.opened) return this.run(key, call);
    const value = await call();
    if (closes) breaker.close();
    return value;
  }

  /** Breakers kept now. */
  get size(): number {
    return this.byKey.size;
  }

  state(key: K): BreakerState {
    const breaker = this.byKey.get(key);
    if (!breaker) return 'closed';
    return breaker.opened ? 'open' : breaker.halfOpen ? 'half_open' : 'closed';
  }

  shutdown(): void {
    for (const breaker of this.byKey.values()) breaker.shutdown();
    this.byKey.clear();
  }

  private breakerOf(key: K): CircuitBreaker {
    let breaker = this.byKey.get(key);
    if (breaker) {
      // Most recently used last: the map's order is the eviction order.
      this.byKey.delete(key);
      this.byKey.set(key, breaker);
      return breaker;
    }
    this.makeRoom();
    breaker = new CircuitBreaker((call: () => Promise<unknown>) => call(), {
      timeout: false,
      errorThresholdPercentage: this.options.errorThresholdPercentage,
      volumeThreshold: this.options.volumeThreshold,
      resetTimeout: this.options.resetTimeoutMs,
      ...(this.options.errorFilter ? { errorFilter: this.options.errorFilter } : {}),
    });
    const report = () => this.options.onState?.(key, this.state(key));
    breaker.on('open', report);
    breaker.on('halfOpen', report);
    breaker.on('close', report);
    this.byKey.set(key, breaker);
    this.options.onState?.(key, 'closed');
    return breaker;
  }

  /** Below `maxKeys` again by evicting closed breakers, least recently used first. */
  private makeRoom(): void {
    const maxKeys = this.options.maxKeys ?? DEFAULT_MAX_BREAKER_KEYS;
    for (const [key, breaker] of this.byKey) {
      if (this.byKey.size < maxKeys) return;
      if (breaker.opened || breaker.halfOpen) continue;
      breaker.shutdown();
      this.byKey.delete(key);
    }
  }
}
