import { fromUnits, monthOf, toUnits } from './units';

describe('budget money units (1e-12, exact)', () => {
  it.each([
    ['0', 0n, '0.000000'],
    ['0.000026', 26_000_000n, '0.000026'],
    ['3.1415', 3_141_500_000_000n, '3.141500'],
    ['0.000000000001', 1n, '0.000000000001'],
    ['1000000', 1_000_000_000_000_000_000n, '1000000.000000'],
  ])('%s is %d units and shows as %s', (decimal, units, shown) => {
    expect(toUnits(decimal)).toBe(units);
    expect(fromUnits(units)).toBe(shown);
  });

  it('adds 10,000 costs of 0.000026 exactly (no float on the way)', () => {
    let sum = 0n;
    for (let i = 0; i < 10_000; i += 1) sum += toUnits('0.000026');
    expect(fromUnits(sum)).toBe('0.260000');
  });

  it('refuses what is not a plain non-negative decimal', () => {
    for (const bad of ['-1', '1e3', 'abc', ''] as const) expect(() => toUnits(bad)).toThrow(RangeError);
  });

  it('names the UTC month', () => {
    expect(monthOf(new Date('2026-11-30T23:59:59.999Z'))).toBe('2026-11');
    expect(monthOf(new Date('2026-12-01T00:00:00.000Z'))).toBe('2026-12');
  });
});
