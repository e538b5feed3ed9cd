import { createHash } from 'node:crypto';
import mongoose, { type Connection, type mongo } from 'mongoose';
import { startPrivateFerret, type PrivateFerret } from '@pack/testkit';

/**
 * Our FerretDB build indexes top-level fields through stored generated columns ("key columns",
 * tools/ferretdb/patches/0004-key-columns.patch, docs/decisions/0033 amendment 2), so PostgreSQL
 * can skip through an index alone; indexes a build without that patch made are rebuilt on them
 * once, when the process starts. This runs a FerretDB of its own (it restarts it and reads its
 * PostgreSQL tables), on a throw-away database.
 */
type Doc = { _id: number; state: string; nested: { k: number } };

const SIZE = 3000;
const document = (i: number): Doc => ({ _id: i, state: ['A', 'B', 'C'][i % 3]!, nested: { k: i % 7 } });

describe('key columns of our FerretDB build', () => {
  let ferret: PrivateFerret;
  let connection: Connection;
  let items: mongo.Collection<Doc>;
  let table: string;

  const indexDefinitions = () =>
    ferret
      .sql(
        `SELECT indexdef FROM pg_indexes WHERE schemaname = 'keys' AND tablename = '${table}' ORDER BY indexname`,
      )
      .trim()
      .split('\n');
  // The same filter and sort with `$and: [{}]` added is never pushed down: FerretDB's own path.
  const page = async (filter: mongo.Filter<Doc>, options: mongo.FindOptions) => {
    const pushed = await items.find(filter, options).toArray();
    expect(pushed).toEqual(await items.find({ ...filter, $and: [{}] }, options).toArray());
    return pushed.map((d) => d._id);
  };
  const connect = async () => {
    connection = await mongoose.createConnection(ferret.url, { dbName: 'keys' }).asPromise();
    items = connection.collection<Doc>('items');
  };

  beforeAll(async () => {
    ferret = await startPrivateFerret('patched', 'bench_key_columns');
    await connect();
    await items.createIndex({ state: 1, _id: -1 });
    await items.createIndex({ 'nested.k': 1 });
    await items.insertMany(Array.from({ length: SIZE }, (_, i) => document(i + 1)));
    table = ferret
      .sql(`SELECT tablename FROM pg_tables WHERE schemaname = 'keys' AND tablename LIKE 'items%'`)
      .trim();
  });

  afterAll(async () => {
    await connection?.close();
    await ferret?.stop();
  });

  it('indexes top-level fields through key columns and nested ones through expressions', () => {
    const definitions = indexDefinitions();
    expect(definitions).toHaveLength(3);
    const id = keyOf('_id');
    expect(definitions).toContainEqual(expect.stringMatching(new RegExp(`^CREATE UNIQUE .* \\(${id}\\)$`)));
    // A key with `_id` among its keys carries nothing more; any other index carries `_id` (INCLUDE).
    expect(definitions).toContainEqual(
      expect.stringMatching(new RegExp(`\\(${keyOf('state')}, ${id} DESC\\)$`)),
    );
    expect(definitions).toContainEqual(
      expect.stringMatching(
        new RegExp(`\\(\\(\\(\\(_jsonb -> 'nested'::text\\) -> 'k'::text\\)\\)\\) INCLUDE \\(${id}\\)$`),
      ),
    );
  });

  it("answers skipped pages, counts, point reads and writes as FerretDB's own path does", async () => {
    expect(await page({ state: 'B' }, { sort: { _id: -1 }, skip: 500, limit: 3 })).toEqual([
      1498, 1495, 1492,
    ]);
    expect(await page({}, { sort: { _id: 1 }, skip: 2990, limit: 20 })).toHaveLength(10);
    expect(await page({ state: { $in: ['A', 'C'] } }, { sort: { _id: -1 }, skip: 1999, limit: 2 })).toEqual([
      2,
    ]);
    expect(await items.countDocuments({ state: 'C' })).toBe(1000);
    expect(await items.findOne({ _id: 77 })).toEqual(document(77));
    await expect(items.insertOne(document(77))).rejects.toMatchObject({ code: 11000 });
    expect((await items.updateOne({ _id: 78 }, { $set: { state: 'Z' } })).modifiedCount).toBe(1);
    expect(await page({ state: 'Z' }, { sort: { _id: -1 }, skip: 0, limit: 5 })).toEqual([78]);
    expect((await items.deleteOne({ _id: 78 })).deletedCount).toBe(1);
    expect(await items.countDocuments({})).toBe(SIZE - 1);
  });

  it('rebuilds the indexes an older build made on expressions when it starts, keeping every document', async () => {
    await connection.close();
    // The layout of a build without patch 0004: expression indexes, no key columns.
    const old = indexDefinitions().map((definition) =>
      definition.replace(/ INCLUDE \(.*\)$/, '').replace(/_key_[0-9a-f]{16}/g, (column) => {
        const field = column === keyOf('_id') ? '_id' : 'state';
        return `((_jsonb -> '${field}'::text))`;
      }),
    );
    const names = ferret.sql(
      `SELECT indexname FROM pg_indexes WHERE schemaname = 'keys' AND tablename = '${table}'`,
    );
    ferret.sql(
      [
        ...names
          .trim()
          .split('\n')
          .map((name) => `DROP INDEX keys."${name}";`),
        `ALTER TABLE keys."${table}" DROP COLUMN ${keyOf('_id')}, DROP COLUMN ${keyOf('state')};`,
        ...old.map((definition) => `${definition};`),
      ].join('\n'),
    );
    expect(indexDefinitions().join('\n')).not.toContain('_key_');

    await ferret.restart();
    await connect();
    expect(await items.countDocuments({})).toBe(SIZE - 1); // the first query loads the metadata
    const definitions = indexDefinitions();
    expect(definitions.filter((d) => d.includes('_key_'))).toHaveLength(3);
    expect(definitions.find((d) => d.includes('nested'))).toMatch(/ INCLUDE \(_key_[0-9a-f]{16}\)$/);
    expect(definitions.find((d) => d.startsWith('CREATE UNIQUE'))).toMatch(/\(_key_[0-9a-f]{16}\)$/);
    expect(await page({ state: 'B' }, { sort: { _id: -1 }, skip: 500, limit: 3 })).toEqual([
      1498, 1495, 1492,
    ]);
    await expect(items.insertOne(document(77))).rejects.toMatchObject({ code: 11000 });
    expect(await items.findOne({ _id: 2999 })).toEqual(document(2999));
  });

  /** The key column's name for a field, as PostgreSQL lists it (0004: `_key_` + 16 hex digits of its SHA-256). */
  function keyOf(field: string): string {
    return `_key_${createHash('sha256').update(field).digest('hex').slice(0, 16)}`;
  }
});
