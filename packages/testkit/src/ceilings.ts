/**
 * Every time-out of the tests, stated once. Each is a ceiling that only a hang reaches, never a
 * guess of how fast the machine is: tests wait on events and conditions (waitFor), and a ceiling
 * only turns a hang into a failure that names what it waited for. PACK_TEST_TIME_SCALE (default 1)
 * multiplies them all: more on a machine much slower than CI's or under a debugger.
 */
export const TIME_SCALE_ENV = 'PACK_TEST_TIME_SCALE';

export function timeScale(value = process.env[TIME_SCALE_ENV]): number {
  if (value === undefined || value === '') return 1;
  const scale = Number(value);
  if (!Number.isFinite(scale) || scale <= 0)
    throw new Error(`${TIME_SCALE_ENV} must be a positive number, got "${value}"`);
  return scale;
}

const scale = timeScale();
const scaled = (ms: number) => Math.round(ms * scale);

export const CEILINGS = {
  /** A condition the system reaches by itself: an event consumed, a row written (waitFor's). */
  wait: scaled(60_000),
  /** A process, service or server to be ready (slow on a loaded machine). */
  start: scaled(120_000),
  /** One test or hook: jest's time-out (set in ceiling-setup.ts). */
  test: scaled(180_000),
  /** A wait in a test that drives volume: thousands of records, replicas, restarts, a cluster. */
  longWait: scaled(300_000),
  /** A test or hook that drives volume. */
  longTest: scaled(600_000),
  /**
   * How long a process a test starts may live at most (then SIGKILL), so a test that forgets one
   * leaves nothing running: past the run of any file, whose processes may outlive one test.
   */
  processLifetime: scaled(1_200_000),
  /** A fake's latency that stands for "never answers": past every ceiling (cleared when the fake stops). */
  hang: scaled(1_800_000),
} as const;
