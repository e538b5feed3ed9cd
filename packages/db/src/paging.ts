import type { mongo } from 'mongoose';

import type { KeyPart, Page } from '@pack/contracts';
import { oneBatch } from './batches';

export type { Page };

export interface PageOptions {
  sort: mongo.Sort;
  limit: number;
  /** Matches to skip (the database walks past each of them); without `after`, 0 by default. */
  offset?: number;
  /** The sort values of the item the page comes after, one per sort field (keyFilter); `offset` then skips from there. */
  after?: readonly KeyPart[];
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
 * The matches after a key in a sort order: `{f: {$lt: v}}` for one field (descending), and for
 * a field then `_id`, `{f: {$lte: v}, $or: [{f: {$lt: v}}, {_id: {$lt: id}}]}`: the `$lte`
 * alone bounds an index on the sort's fields (MongoDB's bounds, our FerretDB build's SQL range,
 * tools/ferretdb/patches/0007), the `$or` then drops the ties up to the key.
 */
export function keyFilter(sort: mongo.Sort, after: readonly KeyPart[]): mongo.Document {
  const entries = Object.entries(sort as Record<string, unknown>);
  if (entries.length !== after.length || entries.length > 2 || entries.some(([, d]) => d !== 1 && d !== -1))
    throw new Error(`a key of ${after.length} values for the sort ${JSON.stringify(sort)}`);
  const past = (direction: unknown) => (direction === 1 ? '$gt' : '$lt');
  const [[field, direction], second] = entries as [[string, 1 | -1], [string, 1 | -1] | undefined];
  if (!second) return { [field]: { [past(direction)]: after[0] } };
  return {
    [field]: { [direction === 1 ? '$gte' : '$lte']: after[0] },
    $or: [{ [field]: { [past(direction)]: after[0] } }, { [second[0]]: { [past(second[1])]: after[1] } }],
  };
}

/** The filter and the key's filter together; `$and` only where they name the same field. */
function withKey(filter: mongo.Document, key: mongo.Document): mongo.Document {
  const overlaps = Object.keys(key).some((field) => field in filter);
  return overlaps ? { $and: [filter, key] } : { ...filter, ...key };
}

/**
 * One page of a list endpoint and the total count.
 *
 * A page by key (`after`) reads from the key on, through the index of the sort, so it costs
 * the same at any depth; its count is that of the whole filter. A page by `offset` skips index
 * entries on both servers (MongoDB and our FerretDB build, docs/decisions/0033), so a page past
 * the middle is read from the other end: the same documents, with the sort flipped, skipping
 * the ones after the page instead, then put back in order. The first page reads its count and
 * its items in parallel; a later page by offset needs the count first. A page is read in one
 * batch (batches.ts): it never leaves a cursor open.
 */
export async function findPage<T extends mongo.Document>(
  collection: mongo.Collection<T>,
  filter: mongo.Filter<T>,
  options: PageOptions,
): Promise<Page<mongo.WithId<T>>> {
  const read = (sort: mongo.Sort, skip: number, limit: number, where: mongo.Document = filter) => {
    const find: mongo.FindOptions = { sort, skip, limit, ...oneBatch(limit) };
    if (options.projection) find.projection = options.projection;
    return collection.find(where as mongo.Filter<T>, find).toArray();
  };
  const { sort, limit, after } = options;
  const offset = options.offset ?? 0;
  if (after) {
    const where = withKey(filter, keyFilter(sort, after));
    const [count, items] = await Promise.all([
      collection.countDocuments(filter),
      read(sort, offset, limit, where),
    ]);
    return { count, items };
  }
  const flipped = offset > 0 && limit > 0 ? reversed(sort, options.unique === true) : null;
  if (!flipped) {
    const [count, items] = await Promise.all([collection.countDocuments(filter), read(sort, offset, limit)]);
    return { count, items };
  }
  const count = await collection.countDocuments(filter);
  const rest = count - offset; // the matches from the page's first one to the end
  if (rest <= 0) return { count, items: [] };
  if (rest >= offset) return { count, items: await read(sort, offset, limit) };
  const take = Math.min(limit, rest);
  const items = await read(flipped, rest - take, take);
  return { count, items: items.reverse() };
}
