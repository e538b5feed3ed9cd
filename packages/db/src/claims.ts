import { mongo, type Connection } from 'mongoose';

/**
 * Claims: the one write that is atomic on every server we support.
 *
 * FerretDB v1 applies an update by reading the document and writing it back, with no lock in
 * between: measured here, 40 concurrent `$inc`s of one field leave 15, and 20 concurrent
 * "update where state = A" all see state A and half of them "win". A unique index, however, is
 * enforced by PostgreSQL itself. So wherever two writers may race (ids, state transitions,
 * leases), the winner is whoever inserts a claim document with a unique `_id` first.
 */
export const CLAIMS_COLLECTION = 'claims';

export function isDuplicateKey(error: unknown): boolean {
  return error instanceof mongo.MongoServerError && error.code === 11000;
}

/** True when this caller is the first (and only) one to claim `key`. */
export async function claim(connection: Connection, key: string): Promise<boolean> {
  try {
    await connection
      .collection<{ _id: string; at: Date }>(CLAIMS_COLLECTION)
      .insertOne({ _id: key, at: new Date() });
    return true;
  } catch (error) {
    if (isDuplicateKey(error)) return false;
    throw error;
  }
}

/** Gives a claim back (the claimed work failed before it changed anything). */
export async function releaseClaim(connection: Connection, key: string): Promise<void> {
  await connection.collection<{ _id: string }>(CLAIMS_COLLECTION).deleteOne({ _id: key });
}
