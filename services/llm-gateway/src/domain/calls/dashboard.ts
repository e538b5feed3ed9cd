import { maySeeCosts, shownCurrency, type GeneralSettings, type Principal } from '@pack/contracts';
import { ValidationError } from '@pack/errors';
import type { CallKind, Rollup } from './calls';
import type { RollupStore } from './store';
import type { OwnedProcessors } from '../models/store';
import { hourOf } from './rollup-math';
import { Sums, type CostView, type DashboardStats } from './dashboard-sums';

export const GROUP_BY = ['model', 'day', 'processor'] as const;
export type GroupBy = (typeof GROUP_BY)[number];

/** The longest range one request may cover: bounds the rollups read (hours x models x processors). */
export const MAX_RANGE_DAYS = 366;
const DAY_MS = 86_400_000;
const HOUR_MS = 3_600_000;

export type { CurrencyCost, DashboardStats } from './dashboard-sums';

export interface DashboardGroup extends DashboardStats {
  /** The model id, the UTC day (YYYY-MM-DD), or the processor id (null: calls without a processor). */
  key: number | string | null;
}

/** The calls of one kind: totals and one entry per group. */
export interface DashboardKind {
  totals: DashboardStats;
  groups: DashboardGroup[];
}

export interface DashboardView extends DashboardKind {
  from: string;
  to: string;
  group_by: GroupBy;
  /**
   * The Currency setting's currency, that of calls made now; null when costs are hidden from the
   * caller or Currency is disabled. Each cost figure names its own.
   */
  currency: string | null;
  costs_hidden: boolean;
  /** Connection tests (endpoint 2), a kind of their own: never in `totals` or `groups`. */
  connection_tests: DashboardKind;
}

/** The groups of one kind being summed. */
class KindSums {
  readonly totals = new Sums();
  readonly groups = new Map<number | string | null, Sums>();

  add(key: number | string | null, rollup: Rollup, currency: string): void {
    this.totals.add(rollup, currency);
    let sums = this.groups.get(key);
    if (!sums) this.groups.set(key, (sums = new Sums()));
    sums.add(rollup, currency);
  }

  view(costs: CostView): DashboardKind {
    const ordered = [...this.groups.entries()].sort(([a], [b]) => compareKeys(a, b));
    return {
      totals: this.totals.stats(costs),
      groups: ordered.map(([key, sums]) => ({ key, ...sums.stats(costs) })),
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
    const costs: CostView = {
      show: showCost,
      // Rollups that name no currency were written when every cost was taken to be in the setting's.
      current: settings.currency.currency,
      // Disabled, no currency is named (shownCurrency), but amounts in each are still kept apart.
      named: (code) => (settings.currency.ENABLED ? code : null),
    };
    const kinds: Record<CallKind, KindSums> = { generation: new KindSums(), connection_test: new KindSums() };
    const mine = role === 'admin' ? undefined : new Set(await this.owned.processorsOwnedBy(principal.id));
    for (const rollup of await this.rollups.between(start, end)) {
      // Connection tests have no processor: an admin's, never shown to a service owner.
      if (mine && (rollup.processor_id === null || !mine.has(rollup.processor_id))) continue;
      kinds[rollup.kind].add(keyOf(rollup, groupBy), rollup, rollup.currency ?? costs.current);
    }
    return {
      from: start.toISOString(),
      to: end.toISOString(),
      group_by: groupBy,
      currency: showCost ? shownCurrency(settings.currency) : null,
      costs_hidden: !showCost,
      ...kinds.generation.view(costs),
      connection_tests: kinds.connection_test.view(costs),
    };
  }
}

/** Numbers and days in ascending order; calls without a processor last. */
function compareKeys(a: number | string | null, b: number | string | null): number {
  if (a === null) return b === null ? 0 : 1;
  if (b === null) return -1;
  return a < b ? -1 : a > b ? 1 : 0;
}
