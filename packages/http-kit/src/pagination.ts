import type { Request } from 'express';
import { z } from 'zod';
import type { KeyPart, PageStart } from '@pack/contracts';
import { decodeKey, encodeKey, keyPattern, type KeyShape } from './page-key';
import { decimalInteger, documentInput } from './params';

/** How a list's items are keyed: the shape of its key and an item's sort values, `_id` last. */
export interface ListKey<T> {
  shape: KeyShape;
  of(item: T): readonly KeyPart[];
}

/** The key of a list sorted by its items' numeric `id` alone: the id itself. */
export const idKey: ListKey<{ id: number }> = { shape: ['int'], of: (item) => [item.id] };

const AFTER_HELP =
  'Start right after the item with this key: the key of the last item seen, in the list order ' +
  '(the `next` link carries it). A page by key costs the same at any depth, and items added or ' +
  'removed meanwhile shift nothing. The item need not exist any more. With `offset`, the page ' +
  'starts that many items further on.';

/** `?limit=&offset=&after=` of a list keyed by `key` (by default, its items' ids). */
export function listQuery(key: Pick<ListKey<never>, 'shape'> = idKey) {
  const text = z.string();
  documentInput(text, { type: 'string', pattern: keyPattern(key.shape), maxLength: 400 });
  return z.object({
    limit: decimalInteger({ min: 1, max: 500 }).default(50).describe('How many results a page holds'),
    offset: decimalInteger()
      .default(0)
      .describe(
        'How many results to skip (after the key, with `after`). Kept for compatibility: the database walks past every skipped result, so a page costs its depth; follow `next` (or pass `after`) instead.',
      ),
    after: text
      .transform((text, ctx) => {
        const parts = decodeKey(key.shape, text);
        if (parts) return parts;
        ctx.addIssue({ code: 'custom', message: 'not a key of this list: pass the key from a `next` link' });
        return z.NEVER;
      })
      .optional()
      .describe(AFTER_HELP),
  });
}

/** `?limit=&offset=&after=` of every list keyed by its items' ids. */
export const listQuerySchema = listQuery(idKey);
export interface ListQuery {
  limit: number;
  offset: number;
  after?: readonly KeyPart[];
}

/**
 * What a store is asked for: one item more than the page holds (the extra one tells whether a
 * next page exists without a second query), from the key (then `offset` items further) or from
 * the offset.
 */
export function pageRequest(query: ListQuery): { limit: number; start: PageStart } {
  const { after, offset } = query;
  return { limit: query.limit + 1, start: after ? { after, offset } : { offset } };
}

export function pageSchema<T extends z.ZodType>(item: T) {
  return z.object({
    count: z.number().int().describe('Every match of the list, not only this page'),
    next: z
      .string()
      .nullable()
      .describe(
        'The next page: a relative link with `after` set to the key of this page’s last item; null at the end',
      ),
    previous: z
      .string()
      .nullable()
      .describe(
        'The page before, for a page read by `offset`; null for the first page and for pages read by key',
      ),
    results: z.array(item),
  });
}

/**
 * `{count, next, previous, results}` from what the store returned for pageRequest (up to one
 * item more than the page). next and previous are relative links keeping the other query
 * parameters; next always pages by key.
 */
export function pageOf<T>(req: Request, query: ListQuery, count: number, fetched: T[], key: ListKey<T>) {
  const results = fetched.slice(0, query.limit);
  const link = (set: Record<string, string>) => {
    const params = new URLSearchParams(req.query as Record<string, string>);
    params.delete('offset');
    params.delete('after');
    params.set('limit', String(query.limit));
    for (const [name, value] of Object.entries(set)) params.set(name, value);
    return `${req.path}?${params.toString()}`;
  };
  const last = results.at(-1);
  return {
    count,
    next:
      fetched.length > query.limit && last !== undefined
        ? link({ after: encodeKey(key.shape, key.of(last)) })
        : null,
    previous:
      !query.after && query.offset > 0
        ? link({ offset: String(Math.max(0, query.offset - query.limit)) })
        : null,
    results,
  };
}
