import { mongo } from 'mongoose';
import { CEILINGS, startPrivateFerret, type PrivateFerret } from '@pack/testkit';
import { findPage } from '../src';

// Tests that drive volume: the long ceiling for every test of the file.
jest.setTimeout(CEILINGS.longTest);

/**
 * A find answers its first 101 documents and keeps a cursor for the rest; our FerretDB (v1) holds
 * one of its PostgreSQL connections for each open cursor (docs/decisions/0051, amendment; the
 * deadlock it led to: services/catalog/test/open-cursors.test.ts). A page of more than 101 is
 * read in one batch: one command, no getMore, no killCursors. On a FerretDB of its own whose pool
 * is 4 connections (which also checks that its single-process lock connection leaves the pool
 * settings out of what it sends PostgreSQL).
 */
type Doc = { _id: number; group: number };

const SIZE = 300;
const LIMIT = 200; // above a first batch's 101 documents

describe('bounded reads leave no cursor open on our FerretDB', () => {
  let ferret: PrivateFerret;
  let client: mongo.MongoClient;
  const getMores: string[] = [];
  const database = 'cursors';

  beforeAll(async () => {
    ferret = await startPrivateFerret('patched', 'bench_cursors', 'pool_max_conns=4');
    client = new mongo.MongoClient(ferret.url, { monitorCommands: true });
    client.on('commandStarted', (event) => {
      if (event.commandName === 'getMore' || event.commandName === 'killCursors')
        getMores.push(event.commandName);
    });
    await client.connect();
    await client
      .db(database)
      .collection<Doc>('items')
      .insertMany(Array.from({ length: SIZE }, (_, i) => ({ _id: i + 1, group: i % 2 })));
  });

  afterAll(async () => {
    await client?.close(true);
    await ferret?.stop();
  });

  const items = () => client.db(database).collection<Doc>('items');

  it('a page of 200, a page of 500 holding all 300 and a later page of 120 are one command each: no getMore, no killCursors', async () => {
    getMores.length = 0;
    const first = await findPage(items(), {}, { sort: { _id: 1 }, limit: LIMIT, offset: 0 });
    expect(first.items.map((d) => d._id)).toEqual(Array.from({ length: LIMIT }, (_, i) => i + 1));
    const whole = await findPage(items(), {}, { sort: { _id: -1 }, limit: 500, offset: 0 });
    expect(whole).toMatchObject({ count: SIZE, items: expect.any(Array) });
    expect(whole.items).toHaveLength(SIZE);
    const late = await findPage(items(), { group: 0 }, { sort: { _id: 1 }, limit: 120, offset: 20 });
    expect(late.items.map((d) => d._id)).toEqual(Array.from({ length: 120 }, (_, i) => 41 + 2 * i));
    expect(getMores).toEqual([]);
  });
});
