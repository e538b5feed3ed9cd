import { isKeptNumber } from '../api/exact-json';

/**
 * What changed between two consecutive configurations (CONFIG PackData of two runs), one line a
 * leaf: `path: before → after`, `path: added value`, `path: removed`. Objects are walked key by
 * key; arrays and scalars are compared whole.
 */
export function configChanges(before: unknown, after: unknown, at = ''): string[] {
  if (isObject(before) && isObject(after)) {
    const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])];
    return keys.flatMap((key) => {
      const path = at ? `${at}.${key}` : key;
      if (!(key in after)) return [`${path}: removed (was ${show(before[key])})`];
      if (!(key in before)) return [`${path}: added ${show(after[key])}`];
      return configChanges(before[key], after[key], path);
    });
  }
  if (JSON.stringify(before) === JSON.stringify(after)) return [];
  return [`${at || '(whole)'}: ${show(before)} → ${show(after)}`];
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value) && !isKeptNumber(value);

const show = (value: unknown) => JSON.stringify(value);
