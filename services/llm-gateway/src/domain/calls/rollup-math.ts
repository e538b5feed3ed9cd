/**
 * The arithmetic of the dashboard's rollups (docs/decisions/0018), pure so it has its own spec.
 *
 * Costs: prices have at most 6 decimals, so every call's cost (tokens x price / 1e6) is a whole
 * number of 1e-12 currency units. Rollups add those units as 64-bit integers, which MongoDB and
 * FerretDB `$inc` exactly; the dashboard turns the sum back into a decimal string.
 *
 * Latency: fixed log-spaced buckets, each 10% wider than the one before, so a percentile read
 * from the counts is the upper edge of its bucket: at most 10% above the true value, never below.
 */
import type { CallMeasured, RollupDelta } from './calls';

export const COST_DECIMALS = 12;
const UNIT = 10n ** BigInt(COST_DECIMALS);

/**
 * A non-negative decimal string as a count of 1e-12 units. A cost with more decimals (only from a
 * price stored before prices were limited to 6 decimals) is rounded half up to the unit.
 */
export function costUnits(cost: string): bigint {
  const match = /^(\d+)(?:\.(\d+))?$/.exec(cost);
  if (!match) throw new RangeError(`not a plain decimal cost: ${cost}`);
  const fraction = match[2] ?? '';
  const kept = fraction.slice(0, COST_DECIMALS).padEnd(COST_DECIMALS, '0');
  const roundUp = fraction.length > COST_DECIMALS && fraction.charCodeAt(COST_DECIMALS) >= 53; // '5'
  return BigInt(match[1]!) * UNIT + BigInt(kept) + (roundUp ? 1n : 0n);
}

/** A count of 1e-12 units as a canonical decimal string ("0.00015", "12", "0"). */
export function unitsToDecimal(units: bigint): string {
  if (units < 0n) throw new RangeError('a cost is never negative');
  const whole = units / UNIT;
  const fraction = (units % UNIT).toString().padStart(COST_DECIMALS, '0').replace(/0+$/, '');
  return fraction ? `${whole}.${fraction}` : whole.toString();
}

/** Width factor of one latency bucket. */
export const LATENCY_GROWTH = 1.1;
const LOG_GROWTH = Math.log(LATENCY_GROWTH);

/** Bucket 0 holds latencies under 1 ms; bucket k >= 1 holds [1.1^(k-1), 1.1^k) ms. */
export function latencyBucket(ms: number): number {
  if (!(ms >= 1)) return 0;
  // The epsilon keeps an exact edge (1.1^k computed in floating point) in the bucket above.
  return Math.floor(Math.log(ms) / LOG_GROWTH + 1e-9) + 1;
}

/** The upper edge of a bucket in ms: what a percentile in that bucket is reported as. */
export function bucketUpperMs(bucket: number): number {
  return bucket <= 0 ? 1 : LATENCY_GROWTH ** bucket;
}

/**
 * The q-quantile (0 < q <= 1) of the latencies counted per bucket, as the upper edge of the
 * bucket holding it, rounded up to whole ms; null without any call.
 */
export function latencyPercentile(counts: ReadonlyMap<number, number>, q: number): number | null {
  let total = 0;
  for (const count of counts.values()) total += count;
  if (total === 0) return null;
  const rank = Math.ceil(q * total);
  let seen = 0;
  for (const bucket of [...counts.keys()].sort((a, b) => a - b)) {
    seen += counts.get(bucket)!;
    if (seen >= rank) return Math.ceil(bucketUpperMs(bucket));
  }
  return null;
}

/** Start of the UTC hour holding `date`. */
export function hourOf(date: Date): Date {
  const hour = new Date(date);
  hour.setUTCMinutes(0, 0, 0);
  return hour;
}

/** What a finished call of any kind adds to its rollup, beside the rollup's key. */
export function callMeasures(
  call: CallMeasured,
): Pick<
  RollupDelta,
  'hour' | 'error' | 'input_tokens' | 'output_tokens' | 'unpriced' | 'cost_units' | 'latency_bucket'
> {
  return {
    hour: hourOf(call.finished_at),
    error: call.outcome !== 'ok',
    input_tokens: call.input_tokens,
    output_tokens: call.output_tokens,
    unpriced: call.unpriced,
    cost_units: call.cost === null ? 0n : costUnits(call.cost),
    latency_bucket: latencyBucket(call.latency_ms),
  };
}
