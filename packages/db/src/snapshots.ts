import type { mongo } from 'mongoose';
import { isDuplicateKey } from './claims';

/** A projection document kept from versioned snapshot events: `_id` is the source's id. */
export interface VersionedDocument {
  _id: number;
  version: number;
}

/**
 * Applies a snapshot event to a projection: one conditional upsert matching only an older
 * version. When the same or a newer version is stored, the upsert's insert collides on `_id`
 * and the snapshot is dropped, so redelivered and out-of-order events change nothing and a
 * tombstone is never undone by a late update. True when the snapshot was applied.
 */
export async function applyVersionedSnapshot<T extends VersionedDocument>(
  collection: mongo.Collection<T>,
  id: number,
  fields: Omit<T, '_id'>,
): Promise<boolean> {
  try {
    await collection.updateOne(
      { _id: id, version: { $lt: fields.version } } as mongo.Filter<T>,
      { $set: fields } as unknown as mongo.UpdateFilter<T>,
      { upsert: true },
    );
    return true;
  } catch (error) {
    if (isDuplicateKey(error)) return false;
    throw error;
  }
}
