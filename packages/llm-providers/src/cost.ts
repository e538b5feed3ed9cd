import DecimalJs from 'decimal.js';

/** Enough significant digits that no sum of realistic costs is ever rounded. */
const Decimal = DecimalJs.clone({ precision: 60, rounding: DecimalJs.ROUND_HALF_EVEN });
const MILLION = new Decimal(1_000_000);

export type Price = string | number | null | undefined;

export interface Prices {
  input_price_per_1m_tokens?: Price;
  output_price_per_1m_tokens?: Price;
}

export interface Unpriced {
  unpriced: true;
}

export type Cost = string | Unpriced;

function decimalOf(value: string | number, name: string): DecimalJs {
  let d: DecimalJs;
  try {
    d = new Decimal(value);
  } catch {
    throw new RangeError(`${name} is not a number`);
  }
  if (!d.isFinite() || d.isNegative()) throw new RangeError(`${name} must be a finite number >= 0`);
  return d;
}

/**
 * Cost of one call (spec 2.2): in/1e6 x input price + out/1e6 x output price, exact, as a
 * decimal string without exponent ("0.0015"). A missing price makes the call unpriced, never 0.
 */
export function costOf(usage: { input_tokens: number; output_tokens: number }, prices: Prices): Cost {
  const inPrice = prices.input_price_per_1m_tokens;
  const outPrice = prices.output_price_per_1m_tokens;
  if (inPrice === null || inPrice === undefined || inPrice === '') return { unpriced: true };
  if (outPrice === null || outPrice === undefined || outPrice === '') return { unpriced: true };
  const tokensIn = decimalOf(usage.input_tokens, 'input_tokens');
  const tokensOut = decimalOf(usage.output_tokens, 'output_tokens');
  return tokensIn
    .times(decimalOf(inPrice, 'input_price_per_1m_tokens'))
    .plus(tokensOut.times(decimalOf(outPrice, 'output_price_per_1m_tokens')))
    .dividedBy(MILLION)
    .toFixed();
}

export function isUnpriced(cost: Cost): cost is Unpriced {
  return typeof cost === 'object';
}

/** Exact sum of the priced costs, and how many were unpriced (so a total is never silently low). */
export function sumCosts(costs: Iterable<Cost>): { total: string; unpriced_calls: number } {
  let total = new Decimal(0);
  let unpriced = 0;
  for (const cost of costs) {
    if (isUnpriced(cost)) unpriced += 1;
    else total = total.plus(decimalOf(cost, 'cost'));
  }
  return { total: total.toFixed(), unpriced_calls: unpriced };
}
