import type { Rollup } from './calls';
import { latencyPercentile, unitsToDecimal } from './rollup-math';

/** One currency's exact cost sum. */
export interface CurrencyCost {
  /** The currency code; null while the Currency setting is disabled (no currency is named). */
  currency: string | null;
  cost: string;
}

export interface DashboardStats {
  calls: number;
  errors: number;
  /** errors / calls, 0 without calls. */
  error_rate: number;
  input_tokens: number;
  output_tokens: number;
  /**
   * Exact sum of the priced calls when they were all made in one currency (`currency`); null
   * when the caller may not see costs, or when they span several currencies (`costs` has each).
   */
  cost: string | null;
  /** The currency of `cost`; null with `cost`, and while the Currency setting is disabled. */
  currency: string | null;
  /** One exact sum per currency the calls were made in, by code; [] when costs are hidden. */
  costs: CurrencyCost[];
  unpriced_calls: number;
  /** Calls answered or tried as a fallback of another model; counted in `calls` too. */
  fallbacks: number;
  /** What `cost` sums: `priced_calls_only` when some call was unpriced (unknown, not 0); null when hidden. */
  cost_covers: 'all_calls' | 'priced_calls_only' | null;
  p50_latency_ms: number | null;
  p95_latency_ms: number | null;
}

/**
 * How costs are shown: hidden or not (Charges Settings), the currency of calls whose rollups name
 * none (the setting now), and the name a currency is shown under (null while Currency is disabled).
 */
export interface CostView {
  show: boolean;
  current: string;
  named(code: string): string | null;
}

/** Sums being built for one group of one kind. */
export class Sums {
  calls = 0;
  errors = 0;
  input_tokens = 0;
  output_tokens = 0;
  unpriced_calls = 0;
  fallbacks = 0;
  /** Cost units per currency code: amounts in different currencies are never added together. */
  readonly units = new Map<string, bigint>();
  readonly latency = new Map<number, number>();

  /** `currency`: the rollup's, or the one it is taken to be in when it names none. */
  add(rollup: Rollup, currency: string): void {
    this.calls += rollup.calls;
    this.errors += rollup.errors;
    this.input_tokens += rollup.input_tokens;
    this.output_tokens += rollup.output_tokens;
    this.unpriced_calls += rollup.unpriced_calls;
    this.units.set(currency, (this.units.get(currency) ?? 0n) + rollup.cost_units);
    this.fallbacks += rollup.fallbacks;
    for (const [bucket, count] of rollup.latency)
      this.latency.set(bucket, (this.latency.get(bucket) ?? 0) + count);
  }

  stats(view: CostView): DashboardStats {
    const costs = view.show ? this.costs(view) : [];
    const single = costs.length === 1 ? costs[0]! : null;
    return {
      calls: this.calls,
      errors: this.errors,
      error_rate: this.calls === 0 ? 0 : this.errors / this.calls,
      input_tokens: this.input_tokens,
      output_tokens: this.output_tokens,
      cost: single?.cost ?? null,
      currency: single?.currency ?? null,
      costs,
      unpriced_calls: this.unpriced_calls,
      fallbacks: this.fallbacks,
      cost_covers: view.show ? (this.unpriced_calls > 0 ? 'priced_calls_only' : 'all_calls') : null,
      p50_latency_ms: latencyPercentile(this.latency, 0.5),
      p95_latency_ms: latencyPercentile(this.latency, 0.95),
    };
  }

  /** Without any call: zero in the current currency. */
  private costs(view: CostView): CurrencyCost[] {
    const units = this.units.size > 0 ? this.units : new Map([[view.current, 0n]]);
    return [...units.entries()]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([code, sum]) => ({ currency: view.named(code), cost: unitsToDecimal(sum) }));
  }
}
