import { KeyedBreakers, type BreakerOptions, type BreakerState } from '@pack/reliability';
import type { SendResult } from './sender';

export type { BreakerOptions, BreakerState };

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
export class Breakers extends KeyedBreakers<number> {
  constructor(options: BreakerOptions, onState: (webhookId: number, state: BreakerState) => void = () => {}) {
    super({ ...options, openError: () => new BreakerOpenError('breaker open'), onState });
  }

  async send(webhookId: number, unwell: (result: SendResult) => boolean, call: () => Promise<SendResult>) {
    try {
      return await this.run(webhookId, async () => {
        const result = await call();
        if (unwell(result)) throw new UnwellTarget(result);
        return result;
      });
    } catch (error) {
      if (error instanceof UnwellTarget) return error.result;
      throw error;
    }
  }
}
