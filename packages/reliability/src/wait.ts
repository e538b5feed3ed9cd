import { exponentialMs } from './backoff';

export interface WaitOptions {
  /** First wait after a failed try; doubled each time up to `maxDelayMs`. */
  baseDelayMs: number;
  maxDelayMs: number;
  /** True: stop waiting (the process is stopping); `waitFor` then resolves `undefined`. */
  stopped?: () => boolean;
  /** Told of every failed try before its wait (to log it). */
  onWait?: (error: unknown, attempt: number, delayMs: number) => void;
  sleep?: (ms: number) => Promise<void>;
}

const sleep = (ms: number) =>
  new Promise<void>((resolve) => {
    setTimeout(resolve, ms).unref?.();
  });

/**
 * Tries `attempt` until it succeeds, waiting longer after each failure (exponential, capped):
 * for what must come up before a service can work (a database, the broker, the settings). Never
 * gives up by itself; resolves `undefined` once `stopped()` says so.
 */
export async function waitFor<T>(
  attempt: (n: number) => Promise<T>,
  options: WaitOptions,
): Promise<T | undefined> {
  for (let n = 0; !options.stopped?.(); n += 1) {
    try {
      return await attempt(n + 1);
    } catch (error) {
      if (options.stopped?.()) return undefined;
      const delay = exponentialMs(options, n);
      options.onWait?.(error, n + 1, delay);
      await (options.sleep ?? sleep)(delay);
    }
  }
  return undefined;
}
