import { costOf, sumCosts } from './cost';

/** Exact reference: prices as integer micro-units (1e-6), costs as BigInt in units of 1e-12. */
const PICO_PER_UNIT = 10n ** 12n;
function picoCost(tokensIn: number, tokensOut: number, inMicro: bigint, outMicro: bigint): bigint {
  // tokens x price(µ) / 1e6 tokens -> units of 1e-12
  return BigInt(tokensIn) * inMicro + BigInt(tokensOut) * outMicro;
}
function fromPico(pico: bigint): string {
  const whole = pico / PICO_PER_UNIT;
  const frac = (pico % PICO_PER_UNIT).toString().padStart(12, '0').replace(/0+$/, '');
  return frac ? `${whole}.${frac}` : `${whole}`;
}

describe('costOf', () => {
  it.each([
    [1_000_000, 0, 0.15, 3, '0.15'],
    [0, 1_000_000, 0.15, 3, '3'],
    [1, 1, 0.15, 0.075, '0.000000225'],
    [10_000_000, 10_000_000, 0.15, 0.075, '2.25'],
    [1234, 5678, '0.075', '3', '0.01712655'],
    [9_999_999, 7, 3, 0.15, '29.99999805'],
  ])('%d in + %d out at %s / %s per million = %s', (tokensIn, tokensOut, inPrice, outPrice, expected) => {
    expect(
      costOf(
        { input_tokens: tokensIn, output_tokens: tokensOut },
        { input_price_per_1m_tokens: inPrice, output_price_per_1m_tokens: outPrice },
      ),
    ).toBe(expected);
  });

  it('is unpriced, never 0, when either price is missing', () => {
    const usage = { input_tokens: 10, output_tokens: 10 };
    expect(costOf(usage, { input_price_per_1m_tokens: 0.15 })).toEqual({ unpriced: true });
    expect(costOf(usage, { input_price_per_1m_tokens: null, output_price_per_1m_tokens: 3 })).toEqual({
      unpriced: true,
    });
  });

  it('is exactly 0 for zero prices (free models are priced)', () => {
    expect(
      costOf(
        { input_tokens: 5, output_tokens: 5 },
        { input_price_per_1m_tokens: 0, output_price_per_1m_tokens: '0' },
      ),
    ).toBe('0');
  });

  it('refuses negative or non-numeric prices', () => {
    const usage = { input_tokens: 1, output_tokens: 1 };
    expect(() => costOf(usage, { input_price_per_1m_tokens: -1, output_price_per_1m_tokens: 1 })).toThrow(
      RangeError,
    );
    expect(() => costOf(usage, { input_price_per_1m_tokens: 'abc', output_price_per_1m_tokens: 1 })).toThrow(
      RangeError,
    );
  });
});

describe('sumCosts', () => {
  it('sums many calls exactly (checked against integer arithmetic)', () => {
    const prices: [number, bigint][] = [
      [0.15, 150_000n],
      [0.075, 75_000n],
      [3, 3_000_000n],
    ];
    let seed = 7;
    const next = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31);
    let expected = 0n;
    const costs = [];
    for (let i = 0; i < 5000; i++) {
      const tokensIn = next() % 10_000_001;
      const tokensOut = next() % 10_000_001;
      const [inPrice, inMicro] = prices[i % 3]!;
      const [outPrice, outMicro] = prices[(i + 1) % 3]!;
      expected += picoCost(tokensIn, tokensOut, inMicro, outMicro);
      costs.push(
        costOf(
          { input_tokens: tokensIn, output_tokens: tokensOut },
          { input_price_per_1m_tokens: inPrice, output_price_per_1m_tokens: outPrice },
        ),
      );
    }
    costs.push({ unpriced: true as const });
    const sum = sumCosts(costs);
    expect(sum.total).toBe(fromPico(expected));
    expect(sum.unpriced_calls).toBe(1);
  });

  it('adds 0.1 ten times to exactly 1, where binary floats drift', () => {
    expect(sumCosts(Array.from({ length: 10 }, () => '0.1')).total).toBe('1');
  });
});
