import { z } from 'zod';
import type { AnyRoute } from './route';

/**
 * A non-negative integer written as decimal digits only: no sign, no leading zero, no spaces,
 * no `0x`, `1e3` or `5.0`, at most Number.MAX_SAFE_INTEGER. Path and query values are text;
 * `Number()` would take all of those forms as numbers, so `/tokens/+1/` would name token 1.
 */
export function decimalInteger({ min = 0, max = Number.MAX_SAFE_INTEGER } = {}) {
  return z
    .string()
    .regex(/^(0|[1-9][0-9]{0,15})$/, 'must be an integer in decimal digits, without sign or leading zero')
    .transform(Number)
    .pipe(z.number().int().min(min).max(max));
}

/** A resource id in a path or a query: 1 .. MAX_SAFE_INTEGER, decimal digits only. */
export const idSchema = decimalInteger({ min: 1 });

/** `:id` path parameters, the same for every route. */
export const idParams = z.object({ id: idSchema });

function decodes(segment: string): boolean {
  try {
    decodeURIComponent(segment);
    return true;
  } catch {
    return false;
  }
}

/**
 * The `:name` parameters that cannot be percent-decoded (`%ZZ`, a truncated UTF-8 sequence) in
 * `path`, by the first route whose template has its shape; empty when no route has.
 */
export function undecodableParams(routes: readonly AnyRoute[], path: string): string[] {
  const segments = path.split('/');
  for (const { path: template } of routes) {
    const parts = template.split('/');
    if (parts.length !== segments.length) continue;
    const shaped = parts.every((part, i) => part.startsWith(':') || part === segments[i]);
    if (!shaped) continue;
    const names = parts.flatMap((part, i) =>
      part.startsWith(':') && !decodes(segments[i]!) ? [part.slice(1)] : [],
    );
    if (names.length > 0) return names;
  }
  return [];
}
