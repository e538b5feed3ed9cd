import { RateLimiterMemory, RateLimiterRes } from 'rate-limiter-flexible';
import type { FailureLimiter } from '../domain/sign-in';

/**
 * Failed sign-ins per client address in a fixed window, in this replica's memory
 * (rate-limiter-flexible): nothing is written on a failed sign-in, and with N replicas an address
 * gets at most N times the allowance (docs/decisions/0016).
 */
export class MemoryFailureLimiter implements FailureLimiter {
  private readonly limiter: RateLimiterMemory;

  constructor(
    private readonly allowed: number,
    windowSeconds: number,
  ) {
    this.limiter = new RateLimiterMemory({ points: allowed, duration: windowSeconds });
  }

  async retryAfter(key: string): Promise<number> {
    const state = await this.limiter.get(key);
    if (!state || state.consumedPoints < this.allowed) return 0;
    return Math.max(1, Math.ceil(state.msBeforeNext / 1000));
  }

  async failed(key: string): Promise<void> {
    try {
      await this.limiter.consume(key);
    } catch (error) {
      // Over the allowance: the next retryAfter() says how long to wait.
      if (!(error instanceof RateLimiterRes)) throw error;
    }
  }

  async succeeded(key: string): Promise<void> {
    await this.limiter.delete(key);
  }
}
