import type { mongo } from 'mongoose';

const NAMESPACE_NOT_FOUND = 26;
const INDEX_NOT_FOUND = 27;

/**
 * Drops the index `name` that an earlier release created and a newer index replaces. Dropping
 * what is not there (a new database, or another replica that dropped it first) is not an error,
 * on MongoDB nor on FerretDB (both answer IndexNotFound or NamespaceNotFound).
 */
export async function dropReplacedIndex(
  collection: Pick<mongo.Collection, 'dropIndex'>,
  name: string,
): Promise<void> {
  try {
    await collection.dropIndex(name);
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (code !== INDEX_NOT_FOUND && code !== NAMESPACE_NOT_FOUND) throw error;
  }
}
