import { CEILINGS } from './ceilings';

export interface WaitOptions {
  /** The ceiling: only a hang reaches it (CEILINGS.wait unless a test that drives volume names a longer one). */
  timeoutMs?: number;
  intervalMs?: number;
  /** What is awaited, for the failure's message. */
  what?: string;
}

/** Polls `probe` until it returns something truthy (and returns that), or fails after `timeoutMs`. */
export async function waitFor<T>(
  probe: () => Promise<T | undefined | null | false> | T | undefined | null | false,
  { timeoutMs = CEILINGS.wait, intervalMs = 50, what = 'condition' }: WaitOptions = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value) return value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline)
      throw new Error(
        `timed out after ${timeoutMs} ms waiting for ${what}${last instanceof Error ? `: ${last.message}` : ''}`,
      );
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
