/**
 * Money as a whole number of 1e-12 currency units: with prices of at most 6 decimals every call's
 * cost is one exactly (packages/contracts prices.ts), and a month's spend up to 9.2 million is
 * exact as a 64-bit integer (`$inc` on Int64 is exact on MongoDB and FerretDB, 0018).
 */
const DECIMALS = 12;
const UNIT = 10n ** BigInt(DECIMALS);

/** A plain non-negative decimal string as units; decimals past the 12th are rounded half up. */
export function toUnits(decimal: string): bigint {
  const match = /^(\d+)(?:\.(\d+))?$/.exec(decimal);
  if (!match) throw new RangeError(`not a plain decimal amount: ${decimal}`);
  const fraction = match[2] ?? '';
  const kept = fraction.slice(0, DECIMALS).padEnd(DECIMALS, '0');
  const roundUp = fraction.length > DECIMALS && fraction.charCodeAt(DECIMALS) >= 53; // '5'
  return BigInt(match[1]!) * UNIT + BigInt(kept) + (roundUp ? 1n : 0n);
}

/** Units as an exact decimal string with at least `minDecimals` decimals ("3.141500"). */
export function fromUnits(units: bigint, minDecimals = 6): string {
  const whole = units / UNIT;
  let fraction = (units % UNIT).toString().padStart(DECIMALS, '0').replace(/0+$/, '');
  fraction = fraction.padEnd(minDecimals, '0');
  return fraction ? `${whole}.${fraction}` : whole.toString();
}

/** The UTC month of `at`, "YYYY-MM". */
export function monthOf(at: Date): string {
  return at.toISOString().slice(0, 7);
}
