import {
  bucketUpperMs,
  costUnits,
  hourOf,
  latencyBucket,
  latencyPercentile,
  unitsToDecimal,
} from './rollup-math';

describe('cost units (1e-12 of the currency)', () => {
  it.each([
    ['0', 0n],
    ['3', 3_000_000_000_000n],
    ['0.00000135', 1_350_000n],
    ['0.000000000001', 1n],
    ['31.5', 31_500_000_000_000n],
    ['0.0000000000014', 1n],
    ['0.0000000000015', 2n],
  ] as const)('reads %s as %s units', (cost, units) => {
    expect(costUnits(cost)).toBe(units);
  });

  it.each([
    [0n, '0'],
    [1n, '0.000000000001'],
    [1_350_000n, '0.00000135'],
    [31_500_000_000_000n, '31.5'],
    [9_223_372_036_854_775_807n, '9223372.036854775807'],
  ] as const)('writes %s units as %s', (units, text) => {
    expect(unitsToDecimal(units)).toBe(text);
  });

  it.each(['-1', '1e-7', 'abc', ''])('refuses %j', (text) => {
    expect(() => costUnits(text)).toThrow(RangeError);
  });
});

describe('latency buckets', () => {
  it('put each latency in a bucket whose upper edge is at most 10% above it', () => {
    for (const ms of [1, 1.5, 7, 10, 99, 100, 101, 999, 12_345, 600_000]) {
      const upper = bucketUpperMs(latencyBucket(ms));
      expect({ ms, ok: upper > ms && upper <= ms * 1.1 + 1e-9 }).toEqual({ ms, ok: true });
    }
    expect(latencyBucket(0)).toBe(0);
    expect(latencyBucket(0.4)).toBe(0);
  });

  it('read percentiles from the counts', () => {
    // 90 calls at ~10 ms and 10 at ~1000 ms: p50 is in 10's bucket, p95 in 1000's.
    const counts = new Map([
      [latencyBucket(10), 90],
      [latencyBucket(1000), 10],
    ]);
    expect(latencyPercentile(counts, 0.5)).toBe(Math.ceil(bucketUpperMs(latencyBucket(10))));
    expect(latencyPercentile(counts, 0.5)).toBeLessThanOrEqual(11);
    expect(latencyPercentile(counts, 0.95)).toBeGreaterThan(1000);
    expect(latencyPercentile(counts, 0.95)).toBeLessThanOrEqual(1100);
    expect(latencyPercentile(new Map(), 0.5)).toBeNull();
  });
});

it('hourOf truncates to the UTC hour', () => {
  expect(hourOf(new Date('2026-11-23T14:59:59.999Z')).toISOString()).toBe('2026-11-23T14:00:00.000Z');
});
