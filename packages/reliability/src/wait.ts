import { exponentialMs, jittered, type Jitter } from './backoff';

export interface WaitOptions {
  /** First wait after a failed try; doubled each time up to `maxDelayMs`. */
  baseDelayMs: number;
  maxDelayMs: number;
  /** How each wait is randomised (backoff.ts); none unless told. */
  jitter?: Jitter;
  random?: () => number;
  /** True: stop waiting (the process is stopping); `waitFor` then resolves `undefined`. */
  stopped?: () => boolean;
  /** Give up after this long: the last error is thrown. Unbounded unless told. */
  maxMs?: number;
  /** False: this error is no reason to wait, and is thrown at once. Every error is, unless told. */
  retryIf?: (error: unknown) => boolean;
  /** Told of every failed try before its wait (to log it). */
  onWait?: (error: unknown, attempt: number, delayMs: number) => void;
  sleep?: (ms: number) => Promise<void>;
  now?: () => number;
}

const sleep = (ms: number) =>
  new Promise<void>((resolve) => {
    setTimeout(resolve, ms).unref?.();
  });

/**
 * Tries `attempt` until it succeeds, waiting longer after each failure (exponential, capped):
 * for what must come up before a service can work (a database, the broker, the settings). Never
 * gives up by itself unless `maxMs` bounds it; resolves `undefined` once `stopped()` says so.
 */
export async function waitFor<T>(
  attempt: (n: number) => Promise<T>,
  options: WaitOptions & { stopped?: undefined },
): Promise<T>;
export async function waitFor<T>(
  attempt: (n: number) => Promise<T>,
  options: WaitOptions,
): Promise<T | undefined>;
export async function waitFor<T>(
  attempt: (n: number) => Promise<T>,
  options: WaitOptions,
): Promise<T | undefined> {
  const now = options.now ?? Date.now;
  const deadline = options.maxMs === undefined ? Infinity : now() + options.maxMs;
  for (let n = 0; !options.stopped?.(); n += 1) {
    try {
      return await attempt(n + 1);
    } catch (error) {
      if (options.retryIf && !options.retryIf(error)) throw error;
      if (now() >= deadline) throw error;
      if (options.stopped?.()) return undefined;
      const step = exponentialMs(options, n);
      const delay = Math.round(jittered(step, options.jitter ?? 'none', options.random));
      options.onWait?.(error, n + 1, delay);
      await (options.sleep ?? sleep)(delay);
    }
  }
  return undefined;
}
