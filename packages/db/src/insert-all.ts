import { mongo } from 'mongoose';
import { isDuplicateKey } from './claims';

const DUPLICATE_KEY = 11000;

/**
 * Inserts documents in one unordered command: a duplicate (an `_id` written before) does not stop
 * the others. One flag per document, in order: true when this insert wrote it, false for a
 * duplicate. Any other failure throws (FerretDB answers InternalError when PostgreSQL is down:
 * nothing was written, which is not a success). FerretDB runs the inserts of one command as one
 * statement batch, so ten documents take about as long as one (group commits use it).
 */
export async function insertAll<T extends { _id: unknown }>(
  collection: mongo.Collection<T>,
  documents: T[],
): Promise<boolean[]> {
  try {
    await collection.insertMany(documents as mongo.OptionalUnlessRequiredId<T>[], { ordered: false });
    return documents.map(() => true);
  } catch (error) {
    if (documents.length === 1 && isDuplicateKey(error)) return [false];
    if (!(error instanceof mongo.MongoBulkWriteError)) throw error;
    const failed: unknown = error.writeErrors;
    const writeErrors = (Array.isArray(failed) ? failed : failed ? [failed] : []) as mongo.WriteError[];
    if (writeErrors.length === 0 || writeErrors.some((write) => write.code !== DUPLICATE_KEY)) throw error;
    const duplicates = new Set(writeErrors.map((write) => write.index));
    return documents.map((_, index) => !duplicates.has(index));
  }
}
