import { parseRetryAfter, retryDelayMs, truncate, verdictOf } from './delivery-rules';

describe('verdictOf', () => {
  it.each([
    [200, 'ok'],
    [204, 'ok'],
    [301, 'failed'],
    [302, 'failed'],
    [400, 'failed'],
    [404, 'failed'],
    [410, 'gone'],
    [429, 'retry'],
    [500, 'retry'],
    [503, 'retry'],
    [null, 'retry'],
  ])('%s -> %s', (status, verdict) => {
    expect(verdictOf(status)).toBe(verdict);
  });
});

describe('retryDelayMs', () => {
  const policy = { maxAttempts: 5, baseDelayMs: 1000, maxDelayMs: 8000 };

  it('doubles per attempt with jitter between half and the whole, capped', () => {
    expect(retryDelayMs(policy, 1, null, () => 0)).toBe(500);
    expect(retryDelayMs(policy, 1, null, () => 1)).toBe(1000);
    expect(retryDelayMs(policy, 3, null, () => 1)).toBe(4000);
    expect(retryDelayMs(policy, 10, null, () => 1)).toBe(8000);
  });

  it('waits at least Retry-After, but never past the cap', () => {
    expect(retryDelayMs(policy, 1, 3, () => 0)).toBe(3000);
    expect(retryDelayMs(policy, 1, 3600, () => 0)).toBe(8000);
  });
});

describe('parseRetryAfter', () => {
  it('reads seconds and HTTP dates, and nothing else', () => {
    const now = Date.parse('2026-11-23T10:00:00Z');
    expect(parseRetryAfter('7', now)).toBe(7);
    expect(parseRetryAfter('Mon, 23 Nov 2026 10:00:30 GMT', now)).toBe(30);
    expect(parseRetryAfter('soon', now)).toBeNull();
    expect(parseRetryAfter(undefined, now)).toBeNull();
  });
});

describe('truncate', () => {
  it('keeps at most the limit and says whether it cut', () => {
    expect(truncate('abcdef', 4)).toEqual({ text: 'abcd', truncated: true });
    expect(truncate('abc', 4)).toEqual({ text: 'abc', truncated: false });
  });
});
