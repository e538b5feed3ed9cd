import mongoose, { type Connection, mongo } from 'mongoose';
import { CEILINGS, dropDatabase, uniqueName } from '@pack/testkit';

// Tests that drive volume: the long ceiling for every test of the file.
jest.setTimeout(CEILINGS.longTest);

/**
 * Our FerretDB build keeps the counts of filters that matched many documents (1,000 or more) in
 * memory and adjusts them on every insert, update and delete (tools/ferretdb/patches/
 * 0003-kept-counts.patch, docs/decisions/0033). Every count here runs twice: as is, and with
 * `$and: [{}]` added, which matches the same documents but is always counted by FerretDB's
 * in-memory path; both must be equal after every kind of write, and a few are written out.
 * On MongoDB both run alike.
 */
type Doc = { _id: number } & mongo.Document;

const SIZE = 2000;

/** state: B for every tenth document, else A; kind p/q/r; n 0-3 as int, long or double. */
function document(i: number): Doc {
  const n = i % 4;
  return {
    _id: i,
    state: i % 10 === 0 ? 'B' : 'A',
    kind: ['p', 'q', 'r'][i % 3],
    n: i % 3 === 0 ? n : i % 3 === 1 ? mongo.Long.fromNumber(n) : new mongo.Double(n),
    flag: i % 2 === 0,
  };
}

const filters: mongo.Document[] = [
  { state: 'A' },
  { state: 'B' },
  { state: { $ne: 'B' } },
  { state: { $in: ['A', 'B'] } },
  { flag: { $ne: true } },
  { flag: false },
  { n: { $in: [0, 1, 2] } },
  { n: 2 },
  { state: 'A', kind: { $ne: 'r' } },
  { state: 'A', flag: true },
  { kind: 'q', n: { $in: [1, 3] } },
];

describe('counts FerretDB keeps for filters matching many documents equal the in-memory counts', () => {
  let connection: Connection;
  let dbName: string;
  let docs: mongo.Collection<Doc>;

  beforeAll(async () => {
    dbName = uniqueName('t_kept_counts');
    connection = await mongoose.createConnection(process.env.MONGO_URL!, { dbName }).asPromise();
    docs = connection.collection<Doc>('kept');
    await docs.createIndex({ state: 1 });
    await docs.insertMany(Array.from({ length: SIZE }, (_, i) => document(i)));
  });

  afterAll(async () => {
    await connection.close();
    await dropDatabase(process.env.MONGO_URL!, dbName);
  });

  const inMemory = (filter: mongo.Document) => ({ ...filter, $and: [{}] });

  /** Every filter's count, as is and in memory; they must be equal. */
  async function counts(): Promise<number[]> {
    const result: number[] = [];
    for (const filter of filters) {
      const [count, memory] = await Promise.all([
        docs.countDocuments(filter),
        docs.countDocuments(inMemory(filter)),
      ]);
      expect({ filter, count }).toEqual({ filter, count: memory });
      result.push(count);
    }
    return result;
  }

  it('counts right after updates, deletes, inserts, upserts and failed writes', async () => {
    expect(await counts()).toEqual([1800, 200, 1800, 2000, 1000, 1000, 1500, 500, 1200, 800, 334]);
    await new Promise((resolve) => setTimeout(resolve, 500)); // FerretDB counts them in the background

    expect(await counts()).toEqual([1800, 200, 1800, 2000, 1000, 1000, 1500, 500, 1200, 800, 334]);
    await docs.updateOne({ _id: 1 }, { $set: { state: 'B' } });
    expect((await counts()).slice(0, 3)).toEqual([1799, 201, 1799]);

    await docs.updateMany({ kind: 'p', state: 'A' }, { $set: { state: 'B', n: 3 } });
    await counts();
    await docs.updateOne({ _id: 2 }, { $set: { n: new mongo.Double(2) } }); // a double equal to the int 2
    await docs.updateOne({ _id: 5 }, { $set: { n: mongo.Long.fromNumber(1) } });
    await docs.updateOne({ _id: 7 }, { $unset: { state: '' } }); // missing
    await docs.updateOne({ _id: 8 }, { $set: { state: null } });
    await docs.replaceOne({ _id: 11 }, { flag: true, state: 'A' });
    await docs.findOneAndUpdate({ _id: 13 }, { $set: { kind: 'q', flag: false } });
    await counts();

    await docs.deleteMany({ kind: 'q', n: 1 });
    await docs.findOneAndDelete({ _id: 3 });
    await docs.deleteOne({ _id: -1 }); // deletes nothing
    await docs.insertMany(Array.from({ length: 100 }, (_, i) => document(SIZE + i)));
    await docs.updateOne({ _id: 20_000 }, { $set: { state: 'A', flag: false } }, { upsert: true });
    await expect(docs.insertOne(document(4))).rejects.toThrow(); // a duplicate _id changes nothing
    await counts();

    // concurrent writers, each flipping its own documents
    await Promise.all(
      Array.from({ length: 20 }, async (_, w) => {
        for (let i = 0; i < 10; i += 1) {
          const _id = 100 + w * 10 + i;
          await docs.updateOne({ _id }, { $set: { state: i % 2 === 0 ? 'B' : 'A', flag: i % 3 === 0 } });
        }
      }),
    );
    await counts();

    expect(await docs.countDocuments({})).toBe(await docs.countDocuments(inMemory({})));
    await docs.updateOne({ _id: 9 }, { $set: { state: 7 } }); // a number among strings
    await counts();
  });

  it('counts right after the collection is dropped and filled again', async () => {
    const again = connection.collection<Doc>('again');
    await again.insertMany(Array.from({ length: 1200 }, (_, i) => ({ _id: i, state: 'A' })));
    expect(await again.countDocuments({ state: 'A' })).toBe(1200);
    await new Promise((resolve) => setTimeout(resolve, 300));
    await again.drop();
    await again.insertMany([
      { _id: 1, state: 'A' },
      { _id: 2, state: 'B' },
    ]);
    expect(await again.countDocuments({ state: 'A' })).toBe(1);
    expect(await again.countDocuments(inMemory({ state: 'A' }))).toBe(1);
  });
});
