import { waitFor } from '@pack/reliability';
import { isDatabaseUnavailable } from './errors';

export interface WhileUnavailableOptions {
  /** Gives up (throws the last error) after this long (default 120 s). */
  maxMs?: number;
  /**
   * Before each try after the first: whether the write already took effect (its answer was lost
   * with the connection). When it resolves true, the write is not made again.
   */
  applied?: () => Promise<boolean>;
}

/**
 * Runs a write that must not be lost (its effect outside, e.g. a webhook sent, already happened)
 * again while the database is away (isDatabaseUnavailable), with backoff from 250 ms to 2 s,
 * for at most `maxMs`. Any other error is thrown at once (docs/decisions/0051).
 */
export async function whileUnavailable<T>(
  write: () => Promise<T>,
  alreadyDone: T,
  options: WhileUnavailableOptions = {},
): Promise<T> {
  return waitFor(
    async (attempt) => {
      if (attempt > 1 && options.applied && (await options.applied())) return alreadyDone;
      return write();
    },
    {
      baseDelayMs: 250,
      maxDelayMs: 2000,
      maxMs: options.maxMs ?? 120_000,
      retryIf: isDatabaseUnavailable,
      holdProcess: true,
    },
  );
}
