import mongoose, { type Connection } from 'mongoose';
import { dropDatabase, uniqueName } from '@pack/testkit';

/**
 * The atomicity probe of docs/decisions/0002, against the server the tests use: every
 * single-document write must be atomic, as on MongoDB. Stock FerretDB v1 fails these cases (it
 * reads and writes back without a lock); ours passes with tools/ferretdb/patches. If they fail
 * locally, the FerretDB on MONGO_URL is probably a stock or older build: scripts/infra.sh up
 * warns about that; `scripts/infra.sh restart-ferretdb` restarts it patched.
 */
const times = <T>(n: number, make: (i: number) => T): T[] => Array.from({ length: n }, (_, i) => make(i));

describe('single-document updates under concurrency', () => {
  let connection: Connection;
  let dbName: string;

  beforeAll(async () => {
    dbName = uniqueName('t_atomicity');
    // A connection of its own, with room for every operation at once: with the services' small
    // pools the driver would queue them and the server would never see them overlap.
    connection = await mongoose
      .createConnection(process.env.MONGO_URL!, { dbName, maxPoolSize: 50, maxConnecting: 50 })
      .asPromise();
    await Promise.all(times(40, () => connection.db!.command({ ping: 1 })));
  });

  afterAll(async () => {
    await connection.close();
    await dropDatabase(process.env.MONGO_URL!, dbName);
  });

  it('keeps every one of 40 concurrent $inc of one field', async () => {
    const counters = connection.collection<{ _id: string; n: number }>('counters');
    await counters.insertOne({ _id: 'c', n: 0 });

    await Promise.all(times(40, () => counters.updateOne({ _id: 'c' }, { $inc: { n: 1 } })));

    expect(await counters.findOne({ _id: 'c' })).toEqual({ _id: 'c', n: 40 });
  });

  it('hands 40 distinct values to 40 concurrent findOneAndUpdate $inc', async () => {
    const sequences = connection.collection<{ _id: string; n: number }>('sequences');
    await sequences.insertOne({ _id: 's', n: 0 });

    const values = await Promise.all(
      times(40, async () => {
        const after = await sequences.findOneAndUpdate(
          { _id: 's' },
          { $inc: { n: 1 } },
          { returnDocument: 'after' },
        );
        return after?.n;
      }),
    );

    expect(values.sort((a, b) => a! - b!)).toEqual(times(40, (i) => i + 1));
  });

  it('keeps all of 20 concurrent $set of different fields of one document', async () => {
    const documents = connection.collection<{ _id: string } & Record<string, unknown>>('documents');
    await documents.insertOne({ _id: 'd' });

    await Promise.all(times(20, (i) => documents.updateOne({ _id: 'd' }, { $set: { [`f${i}`]: i } })));

    const expected = Object.fromEntries([['_id', 'd'], ...times(20, (i) => [`f${i}`, i])]);
    expect(await documents.findOne({ _id: 'd' })).toEqual(expected);
  });

  it('lets exactly one of 20 concurrent conditional updates win', async () => {
    const jobs = connection.collection<{ _id: string; state: string; winner?: number }>('jobs');
    await jobs.insertOne({ _id: 'j', state: 'A' });

    const results = await Promise.all(
      times(20, (i) => jobs.updateOne({ _id: 'j', state: 'A' }, { $set: { state: 'B', winner: i } })),
    );

    const winners = results.flatMap((result, i) => (result.modifiedCount === 1 ? [i] : []));
    expect(winners).toHaveLength(1);
    expect(await jobs.findOne({ _id: 'j' })).toEqual({ _id: 'j', state: 'B', winner: winners[0] });
  });

  it('lets exactly one of 20 conditional updates win while other documents are updated', async () => {
    const jobs = connection.collection<{ _id: number; state: string; n?: number }>('busy_jobs');
    await jobs.insertMany(times(5, (i) => ({ _id: i, state: 'A', n: 0 })));

    const [results] = await Promise.all([
      Promise.all(times(20, () => jobs.updateOne({ _id: 0, state: 'A' }, { $set: { state: 'B' } }))),
      Promise.all(times(20, (i) => jobs.updateOne({ _id: 1 + (i % 4) }, { $inc: { n: 1 } }))),
    ]);

    expect(results.filter((result) => result.modifiedCount === 1)).toHaveLength(1);
    expect(await jobs.find({}).sort({ _id: 1 }).toArray()).toEqual([
      { _id: 0, state: 'B', n: 0 },
      ...times(4, (i) => ({ _id: i + 1, state: 'A', n: 5 })),
    ]);
  });

  it('keeps every $inc when updates by _id and updateMany of the same documents overlap', async () => {
    const counters = connection.collection<{ _id: number; n: number }>('mixed_counters');
    await counters.insertMany(times(4, (i) => ({ _id: i, n: 0 })));

    // per document: 10 x 1 by _id, 10 x 100 by updateMany, 3 x 1000 by findOneAndUpdate
    await Promise.all([
      ...times(40, (i) => counters.updateOne({ _id: i % 4 }, { $inc: { n: 1 } })),
      ...times(10, () => counters.updateMany({}, { $inc: { n: 100 } })),
      ...times(12, (i) => counters.findOneAndUpdate({ _id: i % 4 }, { $inc: { n: 1000 } })),
    ]);

    expect(await counters.find({}).sort({ _id: 1 }).toArray()).toEqual(
      times(4, (i) => ({ _id: i, n: 4010 })),
    );
  });

  it('makes one document from 20 concurrent upserts of one _id, and counts all 20', async () => {
    const totals = connection.collection<{ _id: string; n: number }>('totals');

    const results = await Promise.all(
      times(20, () => totals.updateOne({ _id: 't' }, { $inc: { n: 1 } }, { upsert: true })),
    );

    expect(results.filter((result) => result.upsertedCount === 1)).toHaveLength(1);
    expect(await totals.find({}).toArray()).toEqual([{ _id: 't', n: 20 }]);
  });

  it('gives a lease taken with findOneAndUpdate to exactly one of 20 callers', async () => {
    const leases = connection.collection<{ _id: string; holder: number | null }>('leases');
    await leases.insertOne({ _id: 'l', holder: null });

    const taken = await Promise.all(
      times(20, (i) => leases.findOneAndUpdate({ _id: 'l', holder: null }, { $set: { holder: i } })),
    );

    const holders = taken.flatMap((before, i) => (before ? [i] : []));
    expect(holders).toHaveLength(1);
    expect(await leases.findOne({ _id: 'l' })).toEqual({ _id: 'l', holder: holders[0] });
  });

  it('makes one document from 20 concurrent upserts of one filter, and counts all 20', async () => {
    const items = connection.collection<{ key: string; n: number }>('items');
    // MongoDB itself may insert twice for concurrent upserts without a unique index on the filter
    // (with one, it retries the loser as an update), so code that upserts relies on such an index.
    await items.createIndex({ key: 1 }, { unique: true });

    const results = await Promise.allSettled(
      times(20, () => items.updateOne({ key: 'k' }, { $inc: { n: 1 } }, { upsert: true })),
    );

    expect(results.filter((result) => result.status === 'rejected')).toEqual([]);
    const upserted = results.filter((result) => result.status === 'fulfilled' && result.value.upsertedCount);
    expect(upserted).toHaveLength(1);
    expect(await items.find({ key: 'k' }, { projection: { _id: 0 } }).toArray()).toEqual([
      { key: 'k', n: 20 },
    ]);
  });

  it('removes 20 documents with 20 concurrent deleteOne of one filter', async () => {
    const tasks = connection.collection<{ _id: number; kind: string }>('tasks');
    await tasks.insertMany(times(20, (i) => ({ _id: i, kind: 'done' })));

    const results = await Promise.all(times(20, () => tasks.deleteOne({ kind: 'done' })));

    expect(results.reduce((sum, result) => sum + result.deletedCount, 0)).toBe(20);
    expect(await tasks.countDocuments({ kind: 'done' })).toBe(0);
  });
});
