import mongoose, { type Connection, mongo } from 'mongoose';
import { dropDatabase, uniqueName } from '@pack/testkit';

/**
 * Our FerretDB build answers some finds and counts in PostgreSQL (tools/ferretdb/patches/
 * 0002-pushdown.patch, docs/decisions/0033): only when the filter and the sort are exact there
 * for the types stored; everything else keeps FerretDB's in-memory path. Each query here runs
 * twice: as is, and with `$and: [{}]` added, which matches the same documents but is never
 * pushed down; both answers must be the same, and a few are written out. A page (skip, limit) is
 * held to its slice of the whole in-memory answer, asked once per filter and sort (every sort
 * ends on a unique field, so a page is exactly that slice). On MongoDB both run alike (the test
 * still checks the written-out answers).
 */
/** Documents of any shape: `_id`s of every type. */
type Doc = { _id: number | string | boolean | Date | mongo.ObjectId | mongo.Long } & mongo.Document;

const oid = (n: number) => new mongo.ObjectId(n.toString(16).padStart(24, '0'));
const day = (n: number) => new Date(Date.UTC(2026, 0, 1) + n * 86_400_000);

/** Documents with int _ids and fields of one type each, or of mixed types, null and missing. */
function typedDocuments(): Doc[] {
  return Array.from({ length: 60 }, (_, i) => {
    const doc: Doc = {
      _id: i + 1,
      int: (i * 7) % 13,
      state: ['A', 'B', 'C'][i % 3],
      at: day((i * 5) % 17),
    };
    doc.num = i % 4 === 0 ? (i % 9) + 0.5 : i % 4 === 1 ? mongo.Long.fromNumber(i % 9) : i % 9; // int, long, double
    doc.flag = i % 2 === 0;
    if (i % 5 !== 0) doc.sparse = i % 6; // missing in some documents
    doc.nullable = i % 7 === 0 ? null : i % 8;
    doc.mixed = [i, `s${i}`, oid(i), day(i), i % 2 === 0, [i], { v: i }, null][i % 8];
    doc.word = `w${(i * 11) % 23}`;
    doc.text = [
      'a',
      'B',
      '\u00e9',
      'z',
      'Z',
      '',
      '\u00ff',
      '\u65e5\u672c',
      'a b',
      'ab',
      'A',
      '\u{1f600}',
      '\uff5a',
    ][i % 13]; // code point order
    doc.oid = oid((i * 37) % 61);
    return doc;
  });
}

/** Documents whose _ids are of several types. */
function mixedIdDocuments(): Doc[] {
  const ids: Doc['_id'][] = [
    3,
    'b',
    oid(7),
    1.5,
    'a',
    day(2),
    mongo.Long.fromNumber(2),
    true,
    oid(1),
    -4,
    'c10',
  ];
  return ids.map((_id, i) => ({ _id, n: i % 3, s: `x${i % 2}` }));
}

describe('finds and counts answered in PostgreSQL equal the in-memory answers', () => {
  let connection: Connection;
  let dbName: string;
  let typed: mongo.Collection<Doc>;
  let mixed: mongo.Collection<Doc>;

  beforeAll(async () => {
    dbName = uniqueName('t_pushdown');
    connection = await mongoose.createConnection(process.env.MONGO_URL!, { dbName }).asPromise();
    typed = connection.collection<Doc>('typed');
    mixed = connection.collection<Doc>('mixed');
    await typed.createIndex({ state: 1 });
    await typed.createIndex({ at: -1, _id: -1 });
    await typed.insertMany(typedDocuments());
    await mixed.insertMany(mixedIdDocuments());
  });

  afterAll(async () => {
    await connection.close();
    await dropDatabase(process.env.MONGO_URL!, dbName);
  });

  const inMemory = (filter: mongo.Document) => ({ ...filter, $and: [{}] });
  const ids = (docs: mongo.Document[]) => docs.map((d) => d._id);

  async function sameFind(
    collection: mongo.Collection<Doc>,
    filter: mongo.Document,
    options: mongo.FindOptions,
  ) {
    const [pushed, memory] = await Promise.all([
      collection.find(filter, options).toArray(),
      collection.find(inMemory(filter), options).toArray(),
    ]);
    expect(pushed).toEqual(memory);
    return pushed;
  }

  /** A count depends on the filter alone (no sort, skip or limit). */
  async function sameCount(collection: mongo.Collection<Doc>, filter: mongo.Document) {
    const [count, memoryCount] = await Promise.all([
      collection.countDocuments(filter),
      collection.countDocuments(inMemory(filter)),
    ]);
    expect({ filter, count }).toEqual({ filter, count: memoryCount });
  }

  async function same(collection: mongo.Collection<Doc>, filter: mongo.Document, options: mongo.FindOptions) {
    const pushed = await sameFind(collection, filter, options);
    await sameCount(collection, filter);
    return pushed;
  }

  const sorts: mongo.Sort[] = [
    { _id: 1 },
    { _id: -1 },
    { int: 1, _id: 1 },
    { int: -1, _id: -1 },
    { num: 1, _id: -1 },
    { num: -1, _id: 1 },
    { at: -1, _id: -1 },
    { at: 1, _id: 1 },
    { flag: 1, _id: 1 },
    { sparse: 1, _id: 1 },
    { sparse: -1, _id: 1 },
    { nullable: 1, _id: -1 },
    { nullable: -1, _id: -1 },
    { mixed: 1, _id: 1 },
    { mixed: -1, _id: 1 },
    { word: 1, _id: 1 },
    { text: 1, _id: 1 },
    { text: -1, _id: -1 },
    { oid: 1 },
    { oid: -1 },
    { oid: 1, text: -1 },
    { state: -1, _id: -1 },
  ];
  const filters: mongo.Document[] = [
    {},
    { state: 'B' },
    { state: { $in: ['A', 'C'] } },
    { int: 3 },
    { int: { $in: [1, 2, 12] } },
    { num: 2 },
    { num: 2.5 },
    { flag: true },
    { flag: { $ne: true } },
    { sparse: { $ne: 2 } },
    { sparse: 0 },
    { nullable: 3 },
    { nullable: { $ne: 3 } },
    { mixed: 8 },
    { mixed: 's9' },
    { word: 'w5', state: 'C' },
    { _id: 17 },
    { _id: 17.0, int: 2 },
    { state: 'A', int: { $in: [0, 4] } },
    // ranges and `$or` (patch 0007): the pages by key of the lists
    { int: { $gt: 3 } },
    { int: { $gte: 3, $lt: 9 } },
    { _id: { $lt: 30 } },
    { _id: { $gt: 30.5 } },
    { at: { $lte: day(5) } },
    { text: { $gte: 'a' } },
    { word: { $lt: 'w5' }, state: 'C' },
    { num: { $gt: 2 } },
    { sparse: { $gte: 2 } },
    { nullable: { $lt: 4 } },
    { mixed: { $gt: 3 } },
    { flag: { $gt: false } },
    { oid: { $gt: oid(20) } },
    { state: 'B', $or: [{ int: 3 }, { int: { $gt: 10 } }] },
    { at: { $lte: day(5) }, $or: [{ at: { $lt: day(5) } }, { _id: { $lt: 30 } }] },
    { text: { $lte: 'a' }, $or: [{ text: { $lt: 'a' } }, { _id: { $gt: 20 } }] },
    { $or: [{ nullable: 3 }, { mixed: 8 }] },
  ];

  /** First, middle and last pages, and all but the first three (limit 0: no limit). */
  const pages = [
    [0, 7],
    [20, 7],
    [55, 7],
    [3, 0],
  ] as const;

  it.each(sorts.map((sort) => [JSON.stringify(sort), sort] as const))(
    'finds with sort %s over every filter, first, middle and last pages',
    async (_name, sort) => {
      for (const filter of filters) {
        const [whole, ...pushed] = await Promise.all([
          typed.find(inMemory(filter), { sort }).toArray(),
          ...pages.map(([skip, limit]) => typed.find(filter, { sort, skip, limit }).toArray()),
        ]);
        expect(pushed).toEqual(
          pages.map(([skip, limit]) => whole.slice(skip, limit === 0 ? undefined : skip + limit)),
        );
      }
    },
  );

  it('counts every filter alike', async () => {
    for (const filter of filters) await sameCount(typed, filter);
  });

  it('gives the pages a user would read, written out', async () => {
    expect(ids(await same(typed, {}, { sort: { _id: -1 }, skip: 0, limit: 3 }))).toEqual([60, 59, 58]);
    expect(ids(await same(typed, { state: 'B' }, { sort: { _id: -1 }, skip: 18, limit: 5 }))).toEqual([5, 2]);
    expect(ids(await same(typed, { flag: { $ne: true } }, { sort: { _id: 1 }, limit: 3 }))).toEqual([
      2, 4, 6,
    ]);
    // missing and null sort first ascending, last descending
    expect(ids(await same(typed, {}, { sort: { sparse: 1, _id: 1 }, limit: 3 }))).toEqual([1, 6, 11]);
    expect(ids(await same(typed, {}, { sort: { nullable: -1, _id: 1 }, skip: 50, limit: 10 }))).toEqual([
      49, 1, 8, 15, 22, 29, 36, 43, 50, 57,
    ]);
    // the page after a key, on a time and then _id (each `at` is shared by several documents)
    const afterKey = { at: { $lte: day(5) }, $or: [{ at: { $lt: day(5) } }, { _id: { $lt: 49 } }] };
    expect(ids(await same(typed, afterKey, { sort: { at: -1, _id: -1 }, limit: 4 }))).toEqual([
      36, 19, 2, 46,
    ]);
    expect(await typed.countDocuments({ state: { $in: ['A', 'C'] } })).toBe(40);
    expect(await typed.countDocuments({ sparse: { $ne: 2 } })).toBe(52);
    expect(await typed.estimatedDocumentCount()).toBe(60);
  });

  it('keeps the count of a collection through inserts, deletes, upserts and a drop', async () => {
    const counted = connection.collection<Doc>('counted');
    await counted.insertMany(Array.from({ length: 30 }, (_, i) => ({ _id: i })));
    expect(await counted.countDocuments({})).toBe(30);
    await counted.insertOne({ _id: 30 });
    await expect(counted.insertOne({ _id: 30 })).rejects.toThrow(); // a duplicate adds nothing
    await counted.updateOne({ _id: 31 }, { $set: { v: 1 } }, { upsert: true });
    await counted.deleteMany({ _id: { $lt: 5 } });
    await counted.deleteOne({ _id: 99 }); // deletes nothing
    expect(await counted.countDocuments({})).toBe(27);
    expect(await counted.countDocuments(inMemory({}))).toBe(27);
    expect(await counted.estimatedDocumentCount()).toBe(27);
    await counted.drop();
    expect(await counted.countDocuments({})).toBe(0);
    await counted.insertOne({ _id: 1 });
    expect(await counted.countDocuments({})).toBe(1);
  });

  it('answers finds without a sort (any order) by _id lists and fields', async () => {
    const byNumber = (a: unknown, b: unknown) => Number(a) - Number(b);
    const found = await typed.find({ _id: { $in: [3, 9, 27, 81] } }).toArray();
    expect(ids(found).sort(byNumber)).toEqual([3, 9, 27]);
    const memory = await typed.find(inMemory({ state: 'C', flag: true })).toArray();
    const pushed = await typed.find({ state: 'C', flag: true }).toArray();
    expect(ids(pushed).sort(byNumber)).toEqual(ids(memory).sort(byNumber));
    expect(ids(pushed).sort(byNumber)).toEqual([3, 9, 15, 21, 27, 33, 39, 45, 51, 57]);
    expect(await typed.find({ state: 'C' }, { skip: 5, limit: 3 }).toArray()).toHaveLength(3);
  });

  it('orders strings by code point, as MongoDB does', async () => {
    const texts = (await same(typed, { state: 'A' }, { sort: { text: 1, _id: 1 } })).map(
      (d) => d.text as string,
    );
    expect([...new Set(texts)]).toEqual([
      '',
      'A',
      'B',
      'Z',
      'a',
      'a b',
      'ab',
      'z',
      '\u00e9',
      '\u00ff',
      '\u65e5\u672c',
      '\uff5a',
      '\u{1f600}',
    ]);
  });

  it('keeps the BSON order of _ids of several types', async () => {
    const all = await same(mixed, {}, { sort: { _id: 1 } });
    expect(ids(all)).toEqual([-4, 1.5, 2, 3, 'a', 'b', 'c10', oid(1), oid(7), true, day(2)]);
    await same(mixed, {}, { sort: { _id: -1 }, skip: 2, limit: 4 });
    await same(mixed, { n: 1 }, { sort: { _id: -1 }, skip: 1, limit: 2 });
    await same(mixed, { s: 'x1' }, { sort: { n: 1, _id: 1 } });
  });

  it('reads, updates and deletes by _id of every scalar type', async () => {
    for (const id of [3, 1.5, 'b', oid(7), true, day(2)]) {
      expect((await mixed.findOne({ _id: id }))?._id).toEqual(id);
      const updated = await mixed.updateOne({ _id: id }, { $set: { seen: 1 } });
      expect(updated.modifiedCount).toBe(1);
    }
    expect(await mixed.countDocuments({ seen: 1 })).toBe(6);
    expect((await mixed.findOne({ _id: 2 }))?._id).toEqual(2); // the long 2, found by the int 2
    expect(await mixed.findOne({ _id: '3' })).toBeNull();
    expect((await mixed.deleteOne({ _id: 'a' })).deletedCount).toBe(1);
    expect(await mixed.countDocuments({})).toBe(10);
  });

  it('follows documents whose types change after the first answer', async () => {
    const changing = connection.collection<Doc>('changing');
    await changing.insertMany(Array.from({ length: 10 }, (_, i) => ({ _id: i, v: i })));
    expect(ids(await same(changing, {}, { sort: { v: -1 }, limit: 2 }))).toEqual([9, 8]);
    await changing.updateOne({ _id: 3 }, { $set: { v: 'text' } }); // a string among numbers
    await changing.insertOne({ _id: 10 }); // a document without v
    expect(ids(await same(changing, {}, { sort: { v: -1, _id: 1 }, limit: 2 }))).toEqual([3, 9]);
    expect(ids(await same(changing, {}, { sort: { v: 1, _id: 1 }, limit: 2 }))).toEqual([10, 0]);
    expect(await changing.countDocuments({ v: 3 })).toBe(0);
    await changing.drop();
    await changing.insertMany([
      { _id: 'x', v: 2 },
      { _id: 'y', v: 1 },
    ]);
    expect(ids(await same(changing, {}, { sort: { v: 1 } }))).toEqual(['y', 'x']);
  });
});
