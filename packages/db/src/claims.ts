import { mongo, type Connection } from 'mongoose';

/**
 * Claims: whoever inserts a claim document with a unique `_id` first wins, on every server.
 *
 * They decide "who is first" where there is no document to update yet: integer ids
 * (sequence.ts), one-time work keyed by name. A race on an existing document (state
 * transition, lease, counter) is decided by a conditional update instead (`findOneAndUpdate`
 * with the expected state in the filter, `$inc`), which is atomic on MongoDB and on our FerretDB
 * build (tools/ferretdb; stock FerretDB v1 is not), see docs/decisions/0002.
 */
export const CLAIMS_COLLECTION = 'claims';

/**
 * The id claims as retained records: a claim `<sequence>:<n>` is contested only while the counter
 * hands out `n`, moments after its `at`; swept after the retention (ProcessedEventsSweeper), so
 * the collection does not keep a document per id ever allocated.
 */
export const ID_CLAIMS = { collection: CLAIMS_COLLECTION, key: 'at' } as const;

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
