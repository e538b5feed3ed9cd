import { backoffMs, exponentialMs, jittered } from './backoff';
import { parseRetryAfter } from './retry-after';

const policy = { baseDelayMs: 100, maxDelayMs: 2_000 };

describe('exponential backoff', () => {
  it('doubles from the base per retry and stops at the cap', () => {
    expect([0, 1, 2, 3, 4, 5, 30].map((retry) => exponentialMs(policy, retry))).toEqual([
      100, 200, 400, 800, 1_600, 2_000, 2_000,
    ]);
  });

  it('full jitter waits between 0 and the step; equal jitter between half the step and all of it', () => {
    expect([
      jittered(800, 'full', () => 0),
      jittered(800, 'full', () => 0.25),
      jittered(800, 'full', () => 1),
    ]).toEqual([0, 200, 800]);
    expect([
      jittered(800, 'equal', () => 0),
      jittered(800, 'equal', () => 0.5),
      jittered(800, 'equal', () => 1),
    ]).toEqual([400, 600, 800]);
    expect(jittered(800, 'none', () => 0)).toBe(800);
  });

  it('keeps every jittered delay within its bounds over many random draws', () => {
    for (let i = 0; i < 1_000; i += 1) {
      const full = backoffMs(policy, 3, { jitter: 'full' });
      const equal = backoffMs(policy, 3, { jitter: 'equal' });
      expect(full).toBeGreaterThanOrEqual(0);
      expect(full).toBeLessThanOrEqual(800);
      expect(equal).toBeGreaterThanOrEqual(400);
      expect(equal).toBeLessThanOrEqual(800);
    }
  });

  it('rounds to whole milliseconds', () => {
    expect(backoffMs(policy, 0, { jitter: 'full', random: () => 0.333 })).toBe(33);
    expect(backoffMs(policy, 0, { jitter: 'equal', random: () => 0.333 })).toBe(67);
  });

  it('honours a Retry-After as a floor, but never past the cap', () => {
    expect(backoffMs(policy, 0, { jitter: 'full', random: () => 0, retryAfterSeconds: 1.5 })).toBe(1_500);
    expect(backoffMs(policy, 4, { jitter: 'none', retryAfterSeconds: 1 })).toBe(1_600);
    expect(backoffMs(policy, 0, { jitter: 'full', random: () => 0, retryAfterSeconds: 3_600 })).toBe(2_000);
    expect(backoffMs(policy, 0, { jitter: 'none', retryAfterSeconds: null })).toBe(100);
  });
});

describe('parseRetryAfter', () => {
  const now = Date.parse('2026-11-23T10:00:00Z');

  it('reads a number of seconds, a fraction included', () => {
    expect(parseRetryAfter('7', now)).toBe(7);
    expect(parseRetryAfter(' 120 ', now)).toBe(120);
    expect(parseRetryAfter('0.5', now)).toBe(0.5);
    expect(parseRetryAfter('0', now)).toBe(0);
  });

  it('reads an HTTP date as the seconds until then, rounded up, and a past date as 0', () => {
    expect(parseRetryAfter('Mon, 23 Nov 2026 10:00:30 GMT', now)).toBe(30);
    expect(parseRetryAfter('Mon, 23 Nov 2026 10:01:00 GMT', now + 500)).toBe(60);
    expect(parseRetryAfter('Mon, 23 Nov 2026 09:00:00 GMT', now)).toBe(0);
  });

  it('answers null when the header is absent or unreadable', () => {
    expect(parseRetryAfter(undefined, now)).toBeNull();
    expect(parseRetryAfter('', now)).toBeNull();
    expect(parseRetryAfter('soon', now)).toBeNull();
    expect(parseRetryAfter('-5', now)).toBeNull();
    expect(parseRetryAfter(['1', '2'], now)).toBeNull();
  });
});
