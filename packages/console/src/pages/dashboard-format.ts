/** How dashboard figures read: exact decimal costs as the API gives them, latencies in ms. */
import type { GroupBy } from '../api/types';

export const formatCost = (cost: string | null, currency: string | null) =>
  cost === null ? '—' : currency ? `${cost} ${currency}` : cost;

/**
 * A cost figure as the API gives it: one exact sum per currency the calls were made in, each
 * with its currency, side by side (never added: amounts are not converted).
 */
export const formatCosts = (costs: readonly { currency: string | null; cost: string }[]) =>
  costs.length === 0 ? '—' : costs.map(({ cost, currency }) => formatCost(cost, currency)).join(', ');

/** A chart tick as a plain decimal with at most 4 significant digits (0.000012, 1,500), never 1.2E-5. */
export function axisLabel(value: number): string {
  if (value === 0 || Math.abs(value) >= 1) return value.toLocaleString('en-US');
  return value.toLocaleString('en-US', { maximumSignificantDigits: 4, maximumFractionDigits: 20 });
}

export const formatMs = (ms: number | null) => (ms === null ? '—' : `${Math.round(ms)} ms`);

export function groupLabel(
  groupBy: GroupBy,
  key: number | string | null,
  names: Map<number, string>,
): string {
  if (key === null) return groupBy === 'processor' ? 'No processor (tests, direct calls)' : '—';
  if (typeof key === 'number') return names.has(key) ? `${names.get(key)} (#${key})` : `#${key}`;
  return key;
}
