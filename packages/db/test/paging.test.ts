import mongoose, { type Connection, type mongo } from 'mongoose';
import { dropDatabase, uniqueName } from '@pack/testkit';
import type { KeyPart } from '@pack/contracts';
import { findPage } from '../src';

interface Item {
  _id: number;
  group: number;
  odd: boolean;
  rank: number;
}

/** findPage reads a page past the middle from the other end; every page must stay the same. */
describe('findPage', () => {
  let connection: Connection;
  let dbName: string;
  let items: mongo.Collection<Item>;

  beforeAll(async () => {
    dbName = uniqueName('t_paging');
    connection = await mongoose.createConnection(process.env.MONGO_URL!, { dbName }).asPromise();
    items = connection.collection('items');
    await items.insertMany(
      Array.from({ length: 25 }, (_, i) => ({ _id: i + 1, group: i % 3, odd: i % 2 === 0, rank: 100 - i })),
    );
  });

  afterAll(async () => {
    await connection.close();
    await dropDatabase(process.env.MONGO_URL!, dbName);
  });

  const page = async (filter: mongo.Filter<Item>, sort: mongo.Sort, offset: number, unique = false) => {
    const { count, items: found } = await findPage(items, filter, { sort, offset, limit: 4, unique });
    return { count, ids: found.map((item) => item._id) };
  };

  it('gives the first, middle and last pages newest first', async () => {
    expect(await page({}, { _id: -1 }, 0)).toEqual({ count: 25, ids: [25, 24, 23, 22] });
    expect(await page({}, { _id: -1 }, 12)).toEqual({ count: 25, ids: [13, 12, 11, 10] });
    expect(await page({}, { _id: -1 }, 13)).toEqual({ count: 25, ids: [12, 11, 10, 9] });
    expect(await page({}, { _id: -1 }, 20)).toEqual({ count: 25, ids: [5, 4, 3, 2] });
    expect(await page({}, { _id: -1 }, 24)).toEqual({ count: 25, ids: [1] });
    expect(await page({}, { _id: -1 }, 25)).toEqual({ count: 25, ids: [] });
    expect(await page({}, { _id: -1 }, 40)).toEqual({ count: 25, ids: [] });
  });

  it('keeps filters and sorts on several fields', async () => {
    expect(await page({ odd: true }, { _id: 1 }, 10)).toEqual({ count: 13, ids: [21, 23, 25] });
    expect(await page({ odd: true }, { _id: 1 }, 8)).toEqual({ count: 13, ids: [17, 19, 21, 23] });
    expect(await page({}, { group: -1, _id: 1 }, 18)).toEqual({ count: 25, ids: [7, 10, 13, 16] });
    expect(await page({}, { group: 1, _id: -1 }, 22)).toEqual({ count: 25, ids: [9, 6, 3] });
    expect(await page({}, { group: 1 }, 0)).toMatchObject({ count: 25 });
  });

  it('reads late pages from the end by a unique sort without _id', async () => {
    // rank is distinct (100 down to 76), like a webhook's response seq
    expect(await page({ group: 1 }, { rank: 1 }, 0, true)).toEqual({ count: 8, ids: [23, 20, 17, 14] });
    expect(await page({ group: 1 }, { rank: 1 }, 4, true)).toEqual({ count: 8, ids: [11, 8, 5, 2] });
    expect(await page({ group: 1 }, { rank: 1 }, 5, true)).toEqual({ count: 8, ids: [8, 5, 2] });
    expect(await page({ group: 1 }, { rank: 1 }, 6, true)).toEqual({ count: 8, ids: [5, 2] });
    expect(await page({ group: 1 }, { rank: -1 }, 6, true)).toEqual({ count: 8, ids: [20, 23] });
    expect(await page({ group: 1 }, { rank: 1 }, 8, true)).toEqual({ count: 8, ids: [] });
  });

  /** Every page by key (`after` = the sort values of the last item seen), walked to the end. */
  const walk = async (filter: mongo.Filter<Item>, sort: Record<string, 1 | -1>) => {
    const seen: number[] = [];
    let after: KeyPart[] | undefined;
    for (let pages = 0; pages < 30; pages += 1) {
      const { count, items: found } = await findPage(items, filter, { sort, limit: 4, after });
      expect(count).toBe(await items.countDocuments(filter));
      seen.push(...found.map((item) => item._id));
      const last = found.at(-1);
      if (found.length < 4 || !last) return seen;
      after = Object.keys(sort).map((field) => last[field as keyof Item] as KeyPart);
    }
    throw new Error('the walk did not end');
  };

  it('walks every list by key in the order of its offset pages, filtered or not, ties included', async () => {
    const cases: [mongo.Filter<Item>, Record<string, 1 | -1>][] = [
      [{}, { _id: -1 }],
      [{}, { _id: 1 }],
      [{ odd: true }, { _id: 1 }],
      [{ group: { $in: [0, 2] } }, { _id: -1 }],
      [{}, { group: -1, _id: 1 }], // group has ties: the key's _id breaks them
      [{}, { group: 1, _id: -1 }],
      [{ odd: false }, { group: 1, _id: 1 }],
      [{ group: 1 }, { rank: 1 }], // unique without _id
    ];
    for (const [filter, sort] of cases) {
      const all = await items.find(filter, { sort }).toArray();
      expect(await walk(filter, sort)).toEqual(all.map((item) => item._id));
    }
  });

  it('starts after a key whose item does not exist, and past the end gives nothing', async () => {
    const after = await findPage(items, {}, { sort: { _id: -1 }, limit: 3, after: [10.5] });
    expect(after.items.map((item) => item._id)).toEqual([10, 9, 8]);
    expect((await findPage(items, {}, { sort: { _id: -1 }, limit: 3, after: [1] })).items).toEqual([]);
    const ties = await findPage(items, {}, { sort: { group: 1, _id: 1 }, limit: 2, after: [1, 2] });
    expect(ties.items.map((item) => item._id)).toEqual([5, 8]);
  });
});
