import type { mongo } from 'mongoose';

import type { Page } from '@pack/contracts';
import { oneBatch } from './batches';

export type { Page };

export interface PageOptions {
  sort: mongo.Sort;
  limit: number;
  offset: number;
  projection?: mongo.Document;
  /**
   * The sort's values are distinct among the filter's matches (e.g. a per-webhook sequence
   * number), so it is a total order without `_id` at its end.
   */
  unique?: boolean;
}

/**
 * The sort with every direction flipped, when it is a plain object that is a total order (ending
 * with `_id`, or `unique`), so the flipped one lists the same documents backwards; otherwise null.
 */
function reversed(sort: mongo.Sort, unique: boolean): Record<string, 1 | -1> | null {
  if (typeof sort !== 'object' || sort === null || Array.isArray(sort) || sort instanceof Map) return null;
  const entries = Object.entries(sort as Record<string, unknown>);
  if (entries.length === 0 || (!unique && entries.at(-1)?.[0] !== '_id')) return null;
  const flipped: Record<string, 1 | -1> = {};
  for (const [key, direction] of entries) {
    if (direction !== 1 && direction !== -1) return null;
    flipped[key] = direction === 1 ? -1 : 1;
  }
  return flipped;
}

/**
 * One page of a list endpoint and the total count.
 *
 * Reading a page skips `offset` index entries on both servers (MongoDB and our FerretDB build,
 * docs/decisions/0033), so a page past the middle is read from the other end: the same
 * documents, with the sort flipped, skipping the ones after the page instead, then put back in
 * order. The first page reads its count and its items in parallel; a later page needs the count
 * first. A page is read in one batch (batches.ts): it never leaves a cursor open.
 */
export async function findPage<T extends mongo.Document>(
  collection: mongo.Collection<T>,
  filter: mongo.Filter<T>,
  options: PageOptions,
): Promise<Page<mongo.WithId<T>>> {
  const read = (sort: mongo.Sort, skip: number, limit: number) => {
    const find: mongo.FindOptions = { sort, skip, limit, ...oneBatch(limit) };
    if (options.projection) find.projection = options.projection;
    return collection.find(filter, find).toArray();
  };
  const { sort, offset, limit } = options;
  const flipped = offset > 0 && limit > 0 ? reversed(sort, options.unique === true) : null;
  if (!flipped) {
    const [count, items] = await Promise.all([collection.countDocuments(filter), read(sort, offset, limit)]);
    return { count, items };
  }
  const count = await collection.countDocuments(filter);
  const after = count - offset; // the matches from the page's first one to the end
  if (after <= 0) return { count, items: [] };
  if (after >= offset) return { count, items: await read(sort, offset, limit) };
  const take = Math.min(limit, after);
  const items = await read(flipped, after - take, take);
  return { count, items: items.reverse() };
}
