/** `packctl restore --from <dir> [--drop]`: a backup's collections, indexes first, then documents in batches. */
import { createReadStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { mongo } from 'mongoose';
import { CliError } from '../cli';
import {
  indexDescription,
  MANIFEST,
  parseLine,
  parseManifest,
  type CollectionEntry,
  type Manifest,
} from './format';

/** Small enough that a batch of large documents stays far below a server's 48 MB message. */
const BATCH_DOCUMENTS = 1000;
const BATCH_BYTES = 8 * 1024 * 1024;

export interface RestoreOptions {
  mongoUrl: string;
  /** Where a service's collections go when not to the database named in the backup (--db). */
  databases: Record<string, string>;
  dir: string;
  /** Drop each collection of the backup before restoring it; otherwise a non-empty one refuses. */
  drop: boolean;
  progress?: (line: string) => void;
}

interface Target {
  db: mongo.Db;
  collection: CollectionEntry;
}

async function readManifest(dir: string): Promise<Manifest> {
  let text: string;
  try {
    text = await readFile(path.join(dir, MANIFEST), 'utf8');
  } catch {
    throw new CliError(`${dir} holds no ${MANIFEST}: not a backup, or one that did not finish`);
  }
  try {
    return parseManifest(text);
  } catch (error) {
    throw new CliError(`${path.join(dir, MANIFEST)}: ${(error as Error).message}`);
  }
}

/** Checked before anything is written, so a refusal leaves every database as it was. */
async function refuseNonEmpty(targets: Target[]): Promise<void> {
  const occupied: string[] = [];
  for (const { db, collection } of targets)
    if (await db.collection(collection.name).findOne({}, { projection: { _id: 1 } }))
      occupied.push(`${db.databaseName}.${collection.name}`);
  if (occupied.length > 0)
    throw new CliError(
      `refusing to restore into collections that hold documents: ${occupied.join(', ')}; ` +
        'restore into empty databases, or pass --drop to replace them',
    );
}

/** Inserts the file's documents in batches of whole lines; ordered:false so one batch is one round trip. */
async function loadDocuments(db: mongo.Db, collection: CollectionEntry, dir: string): Promise<number> {
  const target = db.collection(collection.name);
  const lines = createInterface({
    input: createReadStream(path.join(dir, collection.file)),
    crlfDelay: Infinity,
  });
  let batch: Record<string, unknown>[] = [];
  let bytes = 0;
  let inserted = 0;
  const flush = async () => {
    if (batch.length === 0) return;
    inserted += (await target.insertMany(batch, { ordered: false })).insertedCount;
    batch = [];
    bytes = 0;
  };
  for await (const line of lines) {
    if (line.length === 0) continue;
    batch.push(parseLine(line));
    bytes += line.length;
    if (batch.length >= BATCH_DOCUMENTS || bytes >= BATCH_BYTES) await flush();
  }
  await flush();
  return inserted;
}

async function restoreCollection({ db, collection }: Target, options: RestoreOptions): Promise<void> {
  const exists =
    (await db.listCollections({ name: collection.name }, { nameOnly: true }).toArray()).length > 0;
  if (exists && options.drop) await db.collection(collection.name).drop();
  if (!exists || options.drop) await db.createCollection(collection.name);
  if (collection.indexes.length > 0)
    await db.collection(collection.name).createIndexes(collection.indexes.map(indexDescription));
  const inserted = await loadDocuments(db, collection, options.dir);
  if (inserted !== collection.count)
    throw new CliError(
      `${db.databaseName}.${collection.name}: restored ${inserted} documents, the backup counted ${collection.count}`,
    );
  options.progress?.(`${db.databaseName}.${collection.name}: ${inserted} documents`);
}

export async function restore(options: RestoreOptions): Promise<Manifest> {
  const manifest = await readManifest(options.dir);
  const client = new mongo.MongoClient(options.mongoUrl, { serverSelectionTimeoutMS: 10_000 });
  try {
    await client.connect();
    const targets = manifest.databases.flatMap((entry) => {
      const name = options.databases[entry.service] ?? entry.database;
      return entry.collections.map((collection) => ({ db: client.db(name), collection }));
    });
    if (!options.drop) await refuseNonEmpty(targets);
    for (const target of targets) await restoreCollection(target, options);
    return manifest;
  } finally {
    await client.close();
  }
}
