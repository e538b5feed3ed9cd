/** How dashboard figures read: exact decimal costs as the API gives them, latencies in ms. */
import type { GroupBy } from '../api/types';

export const formatCost = (cost: string | null, currency: string | null) =>
  cost === null ? '—' : currency ? `${cost} ${currency}` : cost;

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
