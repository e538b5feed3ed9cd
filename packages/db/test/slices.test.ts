import { createLogger } from '@pack/logging';
import { createMetrics } from '@pack/metrics';
import { dropDatabase, uniqueName } from '@pack/testkit';
import { connectMongo, deleteInSlices, type Mongo } from '../src';

const silent = createLogger({ service: 'test', version: '0', level: 'silent' });

/** deleteInSlices at a small slice size: the same code path as 50,000, on a few documents. */
describe('deleteInSlices on a real MongoDB-wire server', () => {
  let mongo: Mongo;
  let dbName: string;
  type Doc = { _id: number; owner: number; state: string; seq: number };

  beforeEach(async () => {
    dbName = uniqueName('t_slices');
    mongo = connectMongo({
      url: process.env.MONGO_URL!,
      dbName,
      logger: silent,
      metrics: createMetrics('s'),
    });
    await mongo.connected;
    await docs().createIndex({ owner: 1, seq: 1 });
    // owner 1: seq 1..10, every third unfinished; owner 2: seq 1..10
    await docs().insertMany(
      [1, 2].flatMap((owner) =>
        Array.from({ length: 10 }, (_, i) => ({
          _id: owner * 100 + i + 1,
          owner,
          seq: i + 1,
          state: owner === 1 && (i + 1) % 3 === 0 ? 'WAITING' : 'OK',
        })),
      ),
    );
  });
  afterEach(async () => {
    await mongo.close();
    await dropDatabase(process.env.MONGO_URL!, dbName);
  });

  const docs = () => mongo.connection.collection<Doc>('docs');
  const left = async (owner: number) =>
    (await docs().find({ owner }).sort({ seq: 1 }).toArray()).map((doc) => doc.seq);

  async function counted<T>(work: () => Promise<T>): Promise<{ result: T; commands: string[] }> {
    const commands: string[] = [];
    const client = mongo.connection.getClient();
    const record = (event: { commandName: string }) => commands.push(event.commandName);
    client.on('commandStarted', record);
    try {
      return { result: await work(), commands };
    } finally {
      client.off('commandStarted', record);
    }
  }

  it('deletes the range of the matching documents only, two commands per slice', async () => {
    const { result, commands } = await counted(() =>
      deleteInSlices(docs(), { match: { owner: 1, state: 'OK' }, key: 'seq', upTo: { $lte: 8 }, size: 2 }),
    );
    // OK and seq <= 8: 1, 2, 4, 5, 7, 8 in slices {1,2} {4,5} {7,8} and a last one past the range
    expect(result).toBe(6);
    expect(commands).toEqual(['find', 'delete', 'find', 'delete', 'find', 'delete', 'find', 'delete']);
    expect(await left(1)).toEqual([3, 6, 9, 10]);
    expect(await left(2)).toHaveLength(10);
  });

  it('deletes every matching document without a bound, and stops at $lt', async () => {
    expect(await deleteInSlices(docs(), { match: { owner: 2 }, key: 'seq', upTo: { $lt: 4 }, size: 2 })).toBe(
      3,
    );
    expect(await left(2)).toEqual([4, 5, 6, 7, 8, 9, 10]);
    expect(await deleteInSlices(docs(), { match: { owner: 2 }, key: 'seq', size: 3 })).toBe(7);
    expect(await left(2)).toEqual([]);
    expect(await deleteInSlices(docs(), { match: { owner: 2 }, key: 'seq', size: 3 })).toBe(0);
    expect(await left(1)).toHaveLength(10);
  });

  it('is exact when two replicas run it at once', async () => {
    const run = () => deleteInSlices(docs(), { match: { owner: 1 }, key: 'seq', upTo: { $lte: 9 }, size: 2 });
    const [a, b] = await Promise.all([run(), run()]);
    expect(a + b).toBe(9);
    expect(await left(1)).toEqual([10]);
  });
});
