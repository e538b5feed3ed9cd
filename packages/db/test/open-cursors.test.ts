import { mongo } from 'mongoose';
import { startPrivateFerret, type PrivateFerret } from '@pack/testkit';
import { findPage } from '../src';

/**
 * Our FerretDB (v1) holds one of its PostgreSQL connections for each open cursor until the
 * client's getMore exhausts it. In the 30-minute soak, its pool was held by cursors whose getMore
 * could not be sent: the services' driver pools were full of commands waiting for a PostgreSQL
 * connection (docs/decisions/0051, amendment). This runs a FerretDB of its own whose pool is 4
 * connections (which also checks that its single-process lock connection leaves the pool settings
 * out of what it sends PostgreSQL), with clients of 2 connections each. A page read in more than
 * one batch holds a PostgreSQL connection between its replies and costs two or three commands
 * (find, getMore, killCursors); read in one batch, it is one command and holds nothing once
 * answered.
 */
type Doc = { _id: number; group: number };

const SIZE = 300;
const CLIENTS = 3;
const READS_PER_CLIENT = 8;
const LIMIT = 200; // above a first batch's 101 documents

describe('bounded reads leave no cursor open on our FerretDB', () => {
  let ferret: PrivateFerret;
  const clients: mongo.MongoClient[] = [];
  const getMores: string[] = [];
  const database = 'cursors';

  beforeAll(async () => {
    ferret = await startPrivateFerret('patched', 'bench_cursors', 'pool_max_conns=4');
    for (let i = 0; i < CLIENTS; i += 1) {
      const client = new mongo.MongoClient(ferret.url, { maxPoolSize: 2, monitorCommands: true });
      client.on('commandStarted', (event) => {
        if (event.commandName === 'getMore' || event.commandName === 'killCursors')
          getMores.push(event.commandName);
      });
      clients.push(await client.connect());
    }
    await clients[0]!
      .db(database)
      .collection<Doc>('items')
      .insertMany(Array.from({ length: SIZE }, (_, i) => ({ _id: i + 1, group: i % 2 })));
  }, 300_000);

  afterAll(async () => {
    await Promise.all(clients.map((client) => client.close(true)));
    await ferret?.stop();
  }, 60_000);

  const items = (client: mongo.MongoClient) => client.db(database).collection<Doc>('items');

  it('a page of 200 and the last page of 500 are one command each: no getMore, no killCursors', async () => {
    getMores.length = 0;
    const first = await findPage(items(clients[0]!), {}, { sort: { _id: 1 }, limit: LIMIT, offset: 0 });
    expect(first.items.map((d) => d._id)).toEqual(Array.from({ length: LIMIT }, (_, i) => i + 1));
    const whole = await findPage(items(clients[0]!), {}, { sort: { _id: -1 }, limit: 500, offset: 0 });
    expect(whole).toMatchObject({ count: SIZE, items: expect.any(Array) });
    expect(whole.items).toHaveLength(SIZE);
    const late = await findPage(
      items(clients[0]!),
      { group: 0 },
      { sort: { _id: 1 }, limit: 120, offset: 20 },
    );
    expect(late.items.map((d) => d._id)).toEqual(Array.from({ length: 120 }, (_, i) => 41 + 2 * i));
    expect(getMores).toEqual([]);
  });

  it(`${CLIENTS} clients of 2 connections each, ${READS_PER_CLIENT} concurrent pages of ${LIMIT} per client, on a FerretDB pool of 4: every read answers (no deadlock)`, async () => {
    getMores.length = 0;
    const reads = clients.flatMap((client) =>
      Array.from({ length: READS_PER_CLIENT }, (_, i) =>
        findPage(items(client), {}, { sort: { _id: i % 2 === 0 ? 1 : -1 }, limit: LIMIT, offset: 0 }),
      ),
    );
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<'stuck'>((resolve) => {
      timer = setTimeout(() => resolve('stuck'), 10_000);
    });
    const outcome = await Promise.race([Promise.all(reads), deadline]);
    clearTimeout(timer);
    expect(outcome === 'stuck' ? 'stuck after 10 s' : outcome.map((page) => page.items.length)).toEqual(
      Array.from({ length: CLIENTS * READS_PER_CLIENT }, () => LIMIT),
    );
    expect(getMores).toEqual([]);
  }, 30_000);
});
