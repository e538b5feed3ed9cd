import { readFileSync } from 'node:fs';
import path from 'node:path';
import { mongo } from 'mongoose';
import { databaseOverrides, SERVICE_DATABASES, serviceDatabases } from './databases';
import {
  collectionFile,
  documentLine,
  indexDescription,
  indexEntries,
  parseLine,
  parseManifest,
} from './format';

const { Binary, Double, Int32, Long, ObjectId } = mongo.BSON;

describe('backup line format', () => {
  it('reads back every BSON type as the same type and value, on one line', () => {
    const document = {
      _id: new ObjectId('65a1b2c3d4e5f60718293a4b'),
      at: new Date('2026-01-02T03:04:05.678Z'),
      big: Long.fromString('9007199254740993'),
      small: new Int32(7),
      ratio: new Double(2),
      bytes: new Binary(Buffer.from([0, 1, 254, 255])),
      nested: [{ text: 'two\nlines "quoted"', none: null }],
    };
    const line = documentLine(document);
    expect(line).not.toContain('\n');
    expect(line).toContain('"$numberDouble":"2.0"');
    const back = parseLine(line);
    expect(back._id).toBeInstanceOf(ObjectId);
    expect(String(back._id)).toBe('65a1b2c3d4e5f60718293a4b');
    expect((back.at as Date).toISOString()).toBe('2026-01-02T03:04:05.678Z');
    expect(back.big).toBeInstanceOf(Long);
    expect(String(back.big)).toBe('9007199254740993');
    expect(back.small).toBeInstanceOf(Int32);
    expect(back.ratio).toBeInstanceOf(Double);
    expect(Buffer.from((back.bytes as InstanceType<typeof Binary>).buffer)).toEqual(
      Buffer.from([0, 1, 254, 255]),
    );
    expect(back.nested).toEqual([{ text: 'two\nlines "quoted"', none: null }]);
  });

  it('names one file per collection inside its service folder, whatever the collection name', () => {
    expect(collectionFile('catalog', 'services')).toBe('catalog/services.jsonl');
    expect(collectionFile('catalog', '../x/y')).toBe('catalog/..%2Fx%2Fy.jsonl');
  });
});

describe('backup manifest', () => {
  const listed = [
    { v: 2, key: { _id: 1 }, name: '_id_' },
    { v: 2, key: { owner: 1, _id: -1 }, name: 'owner_1__id_-1', unique: true },
    { v: 2, key: { at: 1 }, name: 'at_1', expireAfterSeconds: 604800 },
  ];

  it('keeps every index but _id_, and gives createIndexes its key, name and options without the version', () => {
    const entries = indexEntries(listed);
    expect(entries.map((e) => e.name)).toEqual(['owner_1__id_-1', 'at_1']);
    const written = JSON.parse(JSON.stringify(entries)) as Record<string, unknown>[];
    expect(written.map(indexDescription)).toEqual([
      { key: { owner: 1, _id: -1 }, name: 'owner_1__id_-1', unique: true },
      { key: { at: 1 }, name: 'at_1', expireAfterSeconds: 604800 },
    ]);
  });

  it('refuses a manifest of another format, and one naming files outside the backup', () => {
    const manifest = (file: string) =>
      JSON.stringify({
        format: 'pack-backup',
        version: 1,
        created_at: '2026-01-01T00:00:00.000Z',
        databases: [
          {
            service: 'catalog',
            database: 'pack_catalog',
            collections: [{ name: 'c', file, count: 0, indexes: [] }],
          },
        ],
      });
    expect(parseManifest(manifest('catalog/c.jsonl')).databases[0]!.collections[0]!.file).toBe(
      'catalog/c.jsonl',
    );
    expect(() => parseManifest(manifest('../etc/passwd'))).toThrow(/outside the backup/);
    expect(() => parseManifest(manifest('/etc/passwd'))).toThrow(/outside the backup/);
    expect(() => parseManifest('{"format":"other","version":1,"databases":[]}')).toThrow(/not a pack-backup/);
  });
});

describe('service databases', () => {
  it("names each service's database as its config's MONGO_DB default", () => {
    for (const [service, database] of Object.entries(SERVICE_DATABASES)) {
      const config = readFileSync(
        path.resolve(__dirname, `../../../../services/${service}/src/config.ts`),
        'utf8',
      );
      expect({ service, database: /database: '([^']+)'/.exec(config)?.[1] }).toEqual({ service, database });
    }
  });

  it('replaces a default with --db service=name, and refuses an unknown service or name', () => {
    expect(serviceDatabases(['catalog=t_catalog_1']).find((d) => d.service === 'catalog')?.database).toBe(
      't_catalog_1',
    );
    expect(serviceDatabases()).toHaveLength(6);
    expect(() => databaseOverrides(['billing=x'])).toThrow(/--db takes service=name/);
    expect(() => databaseOverrides(['catalog=a b'])).toThrow(/not a database name/);
  });
});
