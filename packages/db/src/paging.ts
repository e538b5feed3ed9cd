import type { mongo } from 'mongoose';

export interface Page<T> {
  /** Every match, not only this page. */
  count: number;
  items: T[];
}

export interface PageOptions {
  sort: mongo.Sort;
  limit: number;
  offset: number;
  projection?: mongo.Document;
}

/** One page of a list endpoint and the total count, read in parallel. */
export async function findPage<T extends mongo.Document>(
  collection: mongo.Collection<T>,
  filter: mongo.Filter<T>,
  options: PageOptions,
): Promise<Page<mongo.WithId<T>>> {
  const find: mongo.FindOptions = { sort: options.sort, skip: options.offset, limit: options.limit };
  if (options.projection) find.projection = options.projection;
  const [count, items] = await Promise.all([
    collection.countDocuments(filter),
    collection.find(filter, find).toArray(),
  ]);
  return { count, items };
}
