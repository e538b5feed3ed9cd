/** Everything jest can fake except Date: the services a test runs in-process keep real timers. */
const REAL_TIMERS = [
  'hrtime',
  'nextTick',
  'performance',
  'queueMicrotask',
  'setImmediate',
  'clearImmediate',
  'setInterval',
  'clearInterval',
  'setTimeout',
  'clearTimeout',
] as const;

/**
 * Fakes Date only (jest fake timers), starting at `now` and running at real speed from there:
 * every Date the test and the services it started in-process read is on the test's clock, while
 * timers, ticks and performance.now stay real. Undo with `jest.useRealTimers()`.
 */
export function fakeDate(now: Date | number): void {
  jest.useFakeTimers({ now, advanceTimers: true, doNotFake: [...REAL_TIMERS] });
}

/**
 * Fakes Date only, held at `now`: it moves only when the test moves it (jest.setSystemTime), so
 * however long the machine takes between two steps, no deadline on Date comes nearer; timers,
 * ticks and performance.now stay real. Undo with `jest.useRealTimers()`.
 */
export function holdDate(now: Date | number): void {
  jest.useFakeTimers({ now, advanceTimers: false, doNotFake: [...REAL_TIMERS] });
}

/** The start of the next wall-clock minute, in ms since the epoch. */
export function startOfNextMinute(): number {
  return (Math.floor(Date.now() / 60_000) + 1) * 60_000;
}
