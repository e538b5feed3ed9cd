import mongoose, { type Connection } from 'mongoose';
import { startPrivateFerret, type PrivateFerret } from '@pack/testkit';

/**
 * FerretDB v1 creates a database, a collection or an index in several PostgreSQL statements with
 * no transaction, undoing a failed step with a DROP. Killed between two steps, or with PostgreSQL
 * stopping between them (the DROP fails too), it leaves a table or an index no metadata names,
 * and on a stock build every later creation of the same name fails on it with error code 1,
 * which the services read as "database away" and retry forever (a pipeline stage stuck after a
 * database restart). Our build drops such a leftover first (tools/ferretdb/patches/0008). Each
 * case makes the leftover with SQL, as the cut-off creation leaves it, on a FerretDB of its own.
 */
describe('our FerretDB build after a creation cut off halfway', () => {
  let ferret: PrivateFerret;
  let connection: Connection;

  beforeAll(async () => {
    ferret = await startPrivateFerret('patched', 'bench_interrupted');
    connection = await mongoose.createConnection(ferret.url, { dbName: 'cut' }).asPromise();
    await connection.collection('other').insertOne({ _id: 1 } as never);
  });
  afterAll(async () => {
    await connection?.close();
    await ferret?.stop();
  });

  const tableOf = (collection: string) =>
    ferret
      .sql(`SELECT tablename FROM pg_tables WHERE schemaname = 'cut' AND tablename LIKE '${collection}\\_%'`)
      .trim();

  it('a collection whose table was made but not its metadata row takes the next insert', async () => {
    await connection.createCollection('calls');
    const table = tableOf('calls');
    await connection.dropCollection('calls');
    // What a creation cut off after its CREATE TABLE leaves: the table, no metadata row.
    ferret.sql(`CREATE TABLE cut."${table}" (_jsonb jsonb)`);

    const calls = connection.collection<{ _id: string; n: number }>('calls');
    await calls.insertOne({ _id: 'a', n: 1 });
    expect(await calls.find().toArray()).toEqual([{ _id: 'a', n: 1 }]);
    // A whole collection, its unique `_id` index included.
    await expect(calls.insertOne({ _id: 'a', n: 2 })).rejects.toMatchObject({ code: 11000 });
    expect(tableOf('calls')).toBe(table);
  });

  it('an index whose PostgreSQL index was made but not its metadata is created on the next createIndex', async () => {
    const items = connection.collection<{ _id: number; state: string; other: string }>('items');
    await items.insertMany([
      { _id: 1, state: 'A', other: 'x' },
      { _id: 2, state: 'B', other: 'y' },
    ]);
    await items.createIndex({ state: 1 }, { name: 'state_1' });
    const table = tableOf('items');
    const pgIndex = ferret
      .sql(`SELECT indexname FROM pg_indexes WHERE schemaname = 'cut' AND indexname LIKE '${table}\\_state%'`)
      .trim();
    await items.dropIndex('state_1');
    // Left over by a cut-off creation, and not what the index asks for (another key).
    ferret.sql(`CREATE INDEX "${pgIndex}" ON cut."${table}" ((_jsonb->'other'))`);

    await items.createIndex({ state: 1 }, { name: 'state_1' });
    expect((await items.indexes()).map((index) => index.name)).toEqual(['_id_', 'state_1']);
    const definition = ferret
      .sql(`SELECT indexdef FROM pg_indexes WHERE schemaname = 'cut' AND indexname = '${pgIndex}'`)
      .trim();
    expect(definition).toContain('state');
    expect(definition).not.toContain('other');
    expect(await items.find({ state: 'B' }).toArray()).toEqual([{ _id: 2, state: 'B', other: 'y' }]);
  });

  it('a database whose metadata table was made before it was registered takes its first insert', async () => {
    // A database's creation cut off after its schema and metadata table, in this process's life.
    ferret.sql('CREATE SCHEMA fresh; CREATE TABLE fresh._ferretdb_database_metadata (_jsonb jsonb)');
    const fresh = connection.useDb('fresh').collection<{ _id: number }>('things');
    await fresh.insertOne({ _id: 7 });
    expect(await fresh.find().toArray()).toEqual([{ _id: 7 }]);
  });
});
