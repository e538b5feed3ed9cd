import CircuitBreaker from 'opossum';
import type { SendResult } from './ports';

export type BreakerState = 'closed' | 'open' | 'half_open';

export interface BreakerOptions {
  errorThresholdPercentage: number;
  volumeThreshold: number;
  resetTimeoutMs: number;
}

/** The breaker is open: the target is not called and the fire waits. */
export class BreakerOpenError extends Error {}

/** A result that says the target is unwell (network, timeout, 429, 5xx): counts against the breaker. */
class UnwellTarget extends Error {
  constructor(readonly result: SendResult) {
    super(result.error ?? `status ${result.status}`);
  }
}

/**
 * One opossum breaker per webhook (its target), per replica. A target that fails persistently is
 * left alone for the reset time instead of being hammered by every due fire; the fires wait,
 * they are not failed for it.
 */
export class Breakers {
  private readonly byWebhook = new Map<number, CircuitBreaker>();

  constructor(
    private readonly options: BreakerOptions,
    private readonly onState: (webhookId: number, state: BreakerState) => void = () => {},
  ) {}

  async send(webhookId: number, unwell: (result: SendResult) => boolean, call: () => Promise<SendResult>) {
    const breaker = this.breakerOf(webhookId);
    try {
      return (await breaker.fire(async () => {
        const result = await call();
        if (unwell(result)) throw new UnwellTarget(result);
        return result;
      })) as SendResult;
    } catch (error) {
      if (error instanceof UnwellTarget) return error.result;
      if ((error as { code?: string }).code === 'EOPENBREAKER') throw new BreakerOpenError('breaker open');
      throw error;
    }
  }

  state(webhookId: number): BreakerState {
    const breaker = this.byWebhook.get(webhookId);
    if (!breaker) return 'closed';
    return breaker.opened ? 'open' : breaker.halfOpen ? 'half_open' : 'closed';
  }

  get resetTimeoutMs(): number {
    return this.options.resetTimeoutMs;
  }

  shutdown(): void {
    for (const breaker of this.byWebhook.values()) breaker.shutdown();
    this.byWebhook.clear();
  }

  private breakerOf(webhookId: number): CircuitBreaker {
    let breaker = this.byWebhook.get(webhookId);
    if (breaker) return breaker;
    breaker = new CircuitBreaker((action: () => Promise<SendResult>) => action(), {
      timeout: false,
      errorThresholdPercentage: this.options.errorThresholdPercentage,
      volumeThreshold: this.options.volumeThreshold,
      resetTimeout: this.options.resetTimeoutMs,
    });
    const report = () => this.onState(webhookId, this.state(webhookId));
    breaker.on('open', report);
    breaker.on('halfOpen', report);
    breaker.on('close', report);
    this.byWebhook.set(webhookId, breaker);
    this.onState(webhookId, 'closed');
    return breaker;
  }
}
