/**
 * The backup's layout on disk, free of any server: `manifest.json` plus one file per collection,
 * `<service>/<collection>.jsonl`, holding one document per line as canonical Extended JSON (so a
 * Date, ObjectId, Long, Int32, Double or Binary reads back as the same BSON type).
 */
import path from 'node:path';
import { mongo } from 'mongoose';

const { EJSON } = mongo.BSON;

export const MANIFEST = 'manifest.json';
export const FORMAT = 'pack-backup';
export const VERSION = 1;

type Document = Record<string, unknown>;

export interface CollectionEntry {
  name: string;
  /** The collection's file, relative to the backup's folder. */
  file: string;
  /** Documents written to the file. */
  count: number;
  /** listIndexes' answer without the `_id_` index, each as canonical Extended JSON. */
  indexes: Document[];
}

export interface DatabaseEntry {
  service: string;
  /** The database it was read from (restore may write another: --db). */
  database: string;
  collections: CollectionEntry[];
}

export interface Manifest {
  format: typeof FORMAT;
  version: typeof VERSION;
  /** When the backup started reading. */
  created_at: string;
  databases: DatabaseEntry[];
}

export function documentLine(document: Document): string {
  return EJSON.stringify(document, { relaxed: false });
}

export function parseLine(line: string): Document {
  return EJSON.parse(line, { relaxed: false }) as Document;
}

/** Encoded, so any collection name makes one file name inside the service's folder. */
export function collectionFile(service: string, collection: string): string {
  return path.posix.join(service, `${encodeURIComponent(collection)}.jsonl`);
}

/** listIndexes' entries to keep: all but `_id_`, which every collection has anyway. */
export function indexEntries(listed: Document[]): Document[] {
  return listed
    .filter((index) => index.name !== '_id_')
    .map((index) => EJSON.serialize(index, { relaxed: false }));
}

/** A manifest's index entry as createIndexes takes it: `key`, `name` and options, no version. */
export function indexDescription(entry: Document): mongo.IndexDescription {
  // Relaxed: plain numbers, as listIndexes answers them, which every server takes as options.
  const parsed = EJSON.deserialize(entry, { relaxed: true }) as Document;
  const { v: _version, ns: _namespace, ...description } = parsed;
  if (typeof description.name !== 'string' || typeof description.key !== 'object' || !description.key)
    throw new Error(`an index of the manifest has no key or name: ${JSON.stringify(entry)}`);
  return description as unknown as mongo.IndexDescription;
}

/** The manifest's text, checked enough that restore refuses a folder that is not a backup. */
export function parseManifest(text: string): Manifest {
  const manifest = JSON.parse(text) as Partial<Manifest>;
  if (manifest.format !== FORMAT || manifest.version !== VERSION || !Array.isArray(manifest.databases))
    throw new Error(`not a ${FORMAT} version ${VERSION} manifest`);
  for (const database of manifest.databases)
    for (const collection of database.collections)
      if (path.posix.normalize(collection.file).startsWith('..') || path.isAbsolute(collection.file))
        throw new Error(`the manifest names a file outside the backup: ${collection.file}`);
  return manifest as Manifest;
}
