import { z } from 'zod';
import type { AnyRoute } from './route';

/**
 * What the OpenAPI document says a caller sends for a zod schema whose input it cannot state
 * exactly, by that schema: decimal text that the server reads as an integer is documented as the
 * integer with its bounds, which is how OpenAPI describes a path or query parameter (a client
 * generated from the document then sends `/tokens/1/`, never `/tokens/0/`).
 */
export const documentedInputs = new WeakMap<object, Record<string, unknown>>();

/**
 * Documents `schema`, as a request part, by `json` instead of what zod would derive (its
 * description and default stay): for input zod reads through a transform the document cannot
 * state. Returns `schema`; register the schema as used (after `.describe()`, which copies it).
 */
export function documentInput<S extends z.ZodType>(schema: S, json: Record<string, unknown>): S {
  documentedInputs.set(schema, json);
  return schema;
}

/**
 * A non-negative integer written as decimal digits only: no sign, no leading zero, no spaces,
 * no `0x`, `1e3` or `5.0`, at most Number.MAX_SAFE_INTEGER. Path and query values are text;
 * `Number()` would take all of those forms as numbers, so `/tokens/+1/` would name token 1.
 * Documented as `{type: integer, minimum, maximum}`.
 */
export function decimalInteger({ min = 0, max = Number.MAX_SAFE_INTEGER } = {}) {
  const text = z
    .string()
    .regex(/^(0|[1-9][0-9]{0,15})$/, 'must be an integer in decimal digits, without sign or leading zero');
  documentInput(text, { type: 'integer', minimum: min, maximum: max });
  return text.transform(Number).pipe(z.number().int().min(min).max(max));
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
