import { z } from 'zod';

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
