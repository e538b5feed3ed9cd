import type { mongo } from 'mongoose';

/**
 * Documents one slice deletes at most. Our FerretDB deletes the documents a `delete` matched
 * with one PostgreSQL statement holding one parameter per document, and PostgreSQL allows 65,535
 * ("extended protocol limited to 65535 parameters"). Not smaller: FerretDB answers a range
 * (`$lt`, `$lte`) by reading every document of the collection, or of the filter's equalities, in
 * its own process, so each slice costs a scan of what is left; with 10,000 a sweep of 200,000
 * markers took 104 s on the development machine, with 50,000 28 s (docs/decisions/0044). Between
 * slices, writes held by the collection's lock (tools/ferretdb, patch 0001) go on.
 */
export const DELETE_SLICE = 50_000;

type KeyValue = number | Date;

export interface SlicedDelete {
  /**
   * Equalities (and `$in`s) only, on fields the key's index starts with: they pick the documents
   * and, with the sort on the key, are answered from that index (on FerretDB in PostgreSQL,
   * patch 0002), so finding a slice's boundary reads one index range, never the collection.
   */
  match: Record<string, unknown>;
  /** An indexed field every matching document has, a number or a date, (nearly) unique: a time, a sequence. */
  key: string;
  /** Only documents whose key is below (`$lt`) or up to (`$lte`) this go; absent, all that match. */
  upTo?: { $lt: KeyValue } | { $lte: KeyValue };
  /** Default DELETE_SLICE. */
  size?: number;
}

function within(value: KeyValue, upTo: SlicedDelete['upTo']): boolean {
  if (!upTo) return true;
  const v = value.valueOf();
  return '$lt' in upTo ? v < upTo.$lt.valueOf() : v <= upTo.$lte.valueOf();
}

/**
 * `deleteMany({...match, [key]: upTo})` in slices of at most `size` documents, oldest key first:
 * works at any size on our FerretDB (one `deleteMany` of more than 65,535 documents fails there)
 * and unchanged on MongoDB. Each slice is two commands: a find of the `size`-th matching key
 * (sorted on the key, skip, limit 1, the key alone projected) and a `deleteMany` of the keys up to
 * it; the last slice, when fewer remain, deletes the rest of the range. Deleting N documents is
 * thus 2 * (floor(N / size) + 1) commands. A slice deletes more than `size` documents only when
 * documents share the boundary's key value (keys are meant to be nearly unique).
 *
 * Idempotent and safe from several replicas at once: a slice another replica deleted first
 * deletes nothing, and the next boundary is found again. Answers how many documents went.
 */
export async function deleteInSlices<T extends mongo.Document>(
  collection: mongo.Collection<T>,
  { match, key, upTo, size = DELETE_SLICE }: SlicedDelete,
): Promise<number> {
  let deleted = 0;
  for (;;) {
    const [boundary] = await collection
      .find(match as mongo.Filter<T>, {
        sort: { [key]: 1 },
        skip: size - 1,
        limit: 1,
        projection: { _id: 0, [key]: 1 },
      })
      .toArray();
    const value = (boundary as Record<string, unknown> | undefined)?.[key];
    if (boundary !== undefined && typeof value !== 'number' && !(value instanceof Date))
      throw new Error(`deleteInSlices: ${key} of a matching document is neither a number nor a date`);
    const last = boundary === undefined || !within(value as KeyValue, upTo);
    const range = last ? upTo : { $lte: value };
    const filter = range ? { ...match, [key]: range } : match;
    const result = await collection.deleteMany(filter as mongo.Filter<T>);
    deleted += result.deletedCount;
    if (last) return deleted;
  }
}
