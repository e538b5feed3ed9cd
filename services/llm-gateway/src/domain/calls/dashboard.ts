import { maySeeCosts, shownCurrency, type GeneralSettings, type Principal } from '@pack/contracts';
import { ValidationError } from '@pack/errors';
import type { Rollup } from './calls';
import type { RollupStore } from './store';
import type { OwnedProcessors } from '../models/store';
import { hourOf, latencyPercentile, unitsToDecimal } from './rollup-math';

export const GROUP_BY = ['model', 'day', 'processor'] as const;
export type GroupBy = (typeof GROUP_BY)[number];

/** The longest range one request may cover: bounds the rollups read (hours x models x processors). */
export const MAX_RANGE_DAYS = 366;
const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;

export interface DashboardStats {
  calls: number;
  errors: number;
  /** errors / calls, 0 without calls. */
  error_rate: number;
  input_tokens: number;
  output_tokens: number;
  /** Exact sum of the priced calls; null when the caller may not see costs. */
  cost: string | null;
  unpriced_calls: number;
  /** Calls answered or tried as a fallback of another model; counted in `calls` too. */
  fallbacks: number;
  /** What `cost` sums: `priced_calls_only` when some call was unpriced (unknown, not 0); null when hidden. */
  cost_covers: 'all_calls' | 'priced_calls_only' | null;
  p50_latency_ms: number | null;
  p95_latency_ms: number | null;
}

export interface DashboardGroup extends DashboardStats {
  /** The model id, the UTC day (YYYY-MM-DD), or the processor id (null: calls without a processor). */
  key: number | string | null;
}

export interface DashboardView {
  from: string;
  to: string;
  group_by: GroupBy;
  /** The Currency setting's currency; null when costs are hidden from the caller or Currency is disabled. */
  currency: string | null;
  costs_hidden: boolean;
  totals: DashboardStats;
  groups: DashboardGroup[];
}

/** Sums being built for one group. */
class Sums {
  calls = 0;
  errors = 0;
  input_tokens = 0;
  output_tokens = 0;
  unpriced_calls = 0;
  cost_units = 0n;
  fallbacks = 0;
  readonly latency = new Map<number, number>();

  add(rollup: Rollup): void {
    this.calls += rollup.calls;
    this.errors += rollup.errors;
    this.input_tokens += rollup.input_tokens;
    this.output_tokens += rollup.output_tokens;
    this.unpriced_calls += rollup.unpriced_calls;
    this.cost_units += rollup.cost_units;
    this.fallbacks += rollup.fallbacks;
    for (const [bucket, count] of rollup.latency)
      this.latency.set(bucket, (this.latency.get(bucket) ?? 0) + count);
  }

  stats(showCost: boolean): DashboardStats {
    return {
      calls: this.calls,
      errors: this.errors,
      error_rate: this.calls === 0 ? 0 : this.errors / this.calls,
      input_tokens: this.input_tokens,
      output_tokens: this.output_tokens,
      cost: showCost ? unitsToDecimal(this.cost_units) : null,
      unpriced_calls: this.unpriced_calls,
      fallbacks: this.fallbacks,
      cost_covers: showCost ? (this.unpriced_calls > 0 ? 'priced_calls_only' : 'all_calls') : null,
      p50_latency_ms: latencyPercentile(this.latency, 0.5),
      p95_latency_ms: latencyPercentile(this.latency, 0.95),
    };
  }
}

function keyOf(rollup: Rollup, groupBy: GroupBy): number | string | null {
  switch (groupBy) {
    case 'model':
      return rollup.model_id;
    case 'day':
      return rollup.hour.toISOString().slice(0, 10);
    case 'processor':
      return rollup.processor_id;
  }
}

/**
 * The AI Integration dashboard, read from the hourly rollups only. Scoped like
 * the rest of the API (spec section 5): admins see every call, a service owner only the calls of
 * the processors of the Services they own, whatever the grouping.
 */
export class Dashboard {
  constructor(
    private readonly rollups: RollupStore,
    private readonly settings: () => GeneralSettings,
    private readonly owned: OwnedProcessors,
  ) {}

  /**
   * Calls in [from, to) at the resolution of the rollups: `from` is taken back to the start of
   * its UTC hour and `to` forward to the end of its hour.
   */
  async view(principal: Principal, from: Date, to: Date, groupBy: GroupBy): Promise<DashboardView> {
    const role = principal.role;
    if (from > to)
      throw new ValidationError('from is after to', { errors: { 'query.from': ['must not be after to'] } });
    if (to.getTime() - from.getTime() > MAX_RANGE_DAYS * DAY_MS)
      throw new ValidationError('the range is too long', {
        errors: { 'query.from': [`must be at most ${MAX_RANGE_DAYS} days before to`] },
      });
    const start = hourOf(from);
    const end = hourOf(new Date(to.getTime() + HOUR_MS - 1));
    const settings = this.settings();
    const showCost = maySeeCosts(role, settings.charges);
    const totals = new Sums();
    const groups = new Map<number | string | null, Sums>();
    const mine = role === 'admin' ? undefined : new Set(await this.owned.processorsOwnedBy(principal.id));
    for (const rollup of await this.rollups.between(start, end)) {
      if (mine && (rollup.processor_id === null || !mine.has(rollup.processor_id))) continue;
      totals.add(rollup);
      const key = keyOf(rollup, groupBy);
      let sums = groups.get(key);
      if (!sums) groups.set(key, (sums = new Sums()));
      sums.add(rollup);
    }
    const ordered = [...groups.entries()].sort(([a], [b]) => compareKeys(a, b));
    return {
      from: start.toISOString(),
      to: end.toISOString(),
      group_by: groupBy,
      currency: showCost ? shownCurrency(settings.currency) : null,
      costs_hidden: !showCost,
      totals: totals.stats(showCost),
      groups: ordered.map(([key, sums]) => ({ key, ...sums.stats(showCost) })),
    };
  }
}

/** Numbers and days in ascending order; calls without a processor last. */
function compareKeys(a: number | string | null, b: number | string | null): number {
  if (a === null) return b === null ? 0 : 1;
  if (b === null) return -1;
  return a < b ? -1 : a > b ? 1 : 0;
}
