/** `packctl backup --out <dir>`: every collection of the six services' databases, streamed to files. */
import { once } from 'node:events';
import { createWriteStream, existsSync, readdirSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { mongo } from 'mongoose';
import { CliError } from '../cli';
import type { ServiceDatabase } from './databases';
import {
  collectionFile,
  documentLine,
  FORMAT,
  indexEntries,
  MANIFEST,
  VERSION,
  type CollectionEntry,
  type DatabaseEntry,
  type Manifest,
} from './format';

/**
 * Values as stored: without these the driver turns an Int32 or Double into a JS number, which
 * canonical Extended JSON would write back as whichever type the number looks like.
 */
export const AS_STORED = { promoteValues: false, promoteLongs: false, bsonRegExp: true } as const;

/** Whole collections only: views have no documents of their own, system collections are the server's. */
async function collectionNames(db: mongo.Db): Promise<string[]> {
  const listed = await db.listCollections({}, { nameOnly: false }).toArray();
  return listed
    .filter((c) => (c.type ?? 'collection') === 'collection' && !c.name.startsWith('system.'))
    .map((c) => c.name)
    .sort();
}

/** Streams one collection to its file, one line per document, waiting whenever the disk is behind. */
async function dumpCollection(db: mongo.Db, service: string, name: string, dir: string) {
  const file = collectionFile(service, name);
  const stream = createWriteStream(path.join(dir, file), { flags: 'wx' });
  let count = 0;
  try {
    for await (const document of db.collection(name).find({}, { ...AS_STORED, batchSize: 1000 })) {
      if (!stream.write(`${documentLine(document)}\n`)) await once(stream, 'drain');
      count += 1;
    }
  } finally {
    stream.end();
    await once(stream, 'close');
  }
  const indexes = indexEntries((await db.collection(name).listIndexes().toArray()) as mongo.Document[]);
  return { name, file, count, indexes } satisfies CollectionEntry;
}

export interface BackupOptions {
  mongoUrl: string;
  databases: ServiceDatabase[];
  dir: string;
  progress?: (line: string) => void;
}

/**
 * Writes the collections, then the manifest last: a folder without a manifest is an interrupted
 * backup, which restore refuses.
 */
export async function backup(options: BackupOptions): Promise<Manifest> {
  // A new folder each time: files of an earlier or interrupted backup must not mix with this one.
  if (existsSync(options.dir) && readdirSync(options.dir).length > 0)
    throw new CliError(`${options.dir} is not empty: back up into a new or empty folder`);
  const startedAt = new Date().toISOString();
  const client = new mongo.MongoClient(options.mongoUrl, { serverSelectionTimeoutMS: 10_000 });
  try {
    await client.connect();
    const databases: DatabaseEntry[] = [];
    for (const { service, database } of options.databases) {
      const db = client.db(database);
      await mkdir(path.join(options.dir, service), { recursive: true });
      const collections: CollectionEntry[] = [];
      for (const name of await collectionNames(db)) {
        collections.push(await dumpCollection(db, service, name, options.dir));
        options.progress?.(`${database}.${name}: ${collections.at(-1)!.count} documents`);
      }
      databases.push({ service, database, collections });
    }
    const manifest: Manifest = { format: FORMAT, version: VERSION, created_at: startedAt, databases };
    await writeFile(path.join(options.dir, MANIFEST), `${JSON.stringify(manifest, null, 2)}\n`);
    return manifest;
  } finally {
    await client.close();
  }
}
