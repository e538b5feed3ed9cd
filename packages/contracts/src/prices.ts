import { z } from 'zod';

/** LLM model prices (spec 2.1, 2.2): exact decimal strings end to end. */
const DECIMAL = /^([0-9]+)(?:\.([0-9]*))?(?:[eE]([+-]?[0-9]+))?$/;
const MAX_DECIMAL_LENGTH = 40;

/**
 * The canonical text of a non-negative decimal ("0.150" -> "0.15", "1e-7" -> "0.0000001"), or
 * null when `text` is not one. Prices stay decimal strings end to end (DESIGN section 11): a
 * JSON number is read through its shortest round-trip text, never through float arithmetic.
 */
export function canonicalDecimal(text: string): string | null {
  const match = DECIMAL.exec(text);
  if (!match) return null;
  const exponent = Number(match[3] ?? 0);
  if (Math.abs(exponent) > MAX_DECIMAL_LENGTH) return null;
  let digits = match[1]! + (match[2] ?? '');
  let point = match[1]!.length + exponent;
  if (point <= 0) {
    digits = '0'.repeat(1 - point) + digits;
    point = 1;
  }
  if (point > digits.length) digits += '0'.repeat(point - digits.length);
  const whole = digits.slice(0, point).replace(/^0+(?=\d)/, '');
  const fraction = digits.slice(point).replace(/0+$/, '');
  const canonical = fraction ? `${whole}.${fraction}` : whole;
  return canonical.length > MAX_DECIMAL_LENGTH ? null : canonical;
}

/**
 * Decimals a price may have. With at most 6, every call's cost (tokens x price / 1e6) is a whole
 * number of 1e-12 currency units, which the dashboard's rollups add up exactly as 64-bit integers
 * (docs/decisions/0018).
 */
export const MAX_PRICE_DECIMALS = 6;

/**
 * The highest price per million tokens: far above any model's (hundreds at most), so a larger one
 * is a typo, and with it one token costs at most one currency unit, which keeps the rollups' sums
 * of 1e-12 units far inside their 64-bit range.
 */
export const MAX_PRICE = 1_000_000;

/** A price per million tokens: a JSON number or decimal string in, a canonical decimal string out. */
export const priceSchema = z
  .union([
    // The transform checks these; the metadata puts them in the OpenAPI document.
    z.number().meta({ minimum: 0, maximum: MAX_PRICE }),
    z.string().max(MAX_DECIMAL_LENGTH).meta({ pattern: DECIMAL.source }),
  ])
  .transform((value, ctx) => {
    const canonical = canonicalDecimal(String(value));
    if (canonical === null) {
      ctx.addIssue({ code: 'custom', message: 'must be a non-negative decimal number such as "0.15"' });
      return z.NEVER;
    }
    if ((canonical.split('.')[1] ?? '').length > MAX_PRICE_DECIMALS) {
      ctx.addIssue({ code: 'custom', message: `must have at most ${MAX_PRICE_DECIMALS} decimals` });
      return z.NEVER;
    }
    if (Number(canonical) > MAX_PRICE) {
      ctx.addIssue({ code: 'custom', message: `must be at most ${MAX_PRICE}` });
      return z.NEVER;
    }
    return canonical;
  })
  .nullable()
  .describe(
    `Price per 1,000,000 tokens as a non-negative decimal string at most ${MAX_PRICE}, with at most ${MAX_PRICE_DECIMALS} decimals and ${MAX_DECIMAL_LENGTH} characters once written out without exponent (a JSON number is accepted); null: unpriced`,
  );
