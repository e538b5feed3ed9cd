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
  /** True: wait (the first step) before the first try too, e.g. reconnecting right after a loss. */
  delayFirst?: boolean;
  /** Give up after this long: the last error is thrown. Unbounded unless told. */
  maxMs?: number;
  /** False: this error is no reason to wait, and is thrown at once. Every error is, unless told. */
  retryIf?: (error: unknown) => boolean;
  /** Told of every failed try before its wait (to log it). */
  onWait?: (error: unknown, attempt: number, delayMs: number) => void;
  /**
   * True: a wait keeps the process alive (a write that must not be lost, a connect a process
   * awaits before anything else holds it up). By default it does not.
   */
  holdProcess?: boolean;
  sleep?: (ms: number) => Promise<void>;
  now?: () => number;
}

const sleep = (ms: number, holdProcess = false) =>
  new Promise<void>((resolve) => {
    const timer = setTimeout(resolve, ms);
    if (!holdProcess) timer.unref?.();
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
  let waits = 0;
  const nextDelay = () =>
    Math.round(jittered(exponentialMs(options, waits++), options.jitter ?? 'none', options.random));
  const pause = (ms: number) => (options.sleep ?? sleep)(ms, options.holdProcess);
  if (options.delayFirst) await pause(nextDelay());
  for (let n = 1; !options.stopped?.(); n += 1) {
    try {
      return await attempt(n);
    } catch (error) {
      if (options.retryIf && !options.retryIf(error)) throw error;
      if (now() >= deadline) throw error;
      if (options.stopped?.()) return undefined;
      const delay = nextDelay();
      options.onWait?.(error, n, delay);
      await pause(delay);
    }
  }
  return undefined;
}
