/**
 * Reads answered in their first reply, so they never leave a cursor open on the server.
 *
 * A find answers its first batch (101 documents unless told otherwise) and keeps a cursor for the
 * rest, which the driver fetches with getMore. Our FerretDB (v1) holds one of its PostgreSQL
 * connections for each open cursor until it is exhausted or killed. In the 30-minute soak, its
 * pool was entirely held by cursors whose getMore could not be sent: the services' driver pools
 * were full of commands waiting for a PostgreSQL connection — a deadlock across the two pools
 * (docs/decisions/0051, amendment). A read given a batch size above what it can return is one
 * command (no getMore) and holds no connection once answered. FerretDB closes a cursor only when
 * its batch comes out smaller than the batch size, hence `limit + 1`.
 */

/** Find options for a read of at most `limit` documents (none for 0: no limit). */
export function oneBatch(limit: number): { batchSize?: number } {
  return limit > 0 ? { batchSize: limit + 1 } : {};
}

/**
 * The batch size of reads bounded only by the data (e.g. the transitions of a page of Service
 * Items, the ids a user owns): a reply of up to 10,000 documents, so they are one command for any
 * size seen in practice; a larger result still arrives, in more batches.
 */
export const LARGE_BATCH = 10_000;
