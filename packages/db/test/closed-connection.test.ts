import { createLogger } from '@pack/logging';
import { createMetrics } from '@pack/metrics';
import { CEILINGS, uniqueName } from '@pack/testkit';
import { connectMongo, isDatabaseUnavailable, type Mongo } from '../src';

/**
 * The database server killed (kill -9) while a service writes. A socket whose peer closed is
 * destroyed at once, and its 'close' event, which fails the commands in flight on it, comes a
 * turn of the event loop later. The driver (mongodb 6.20) could still hand that connection out in
 * between; the command written to it then waited for a 'drain' that never comes, forever: seen as
 * an llm-gateway whose claims never reached the database again after a FerretDB restart (every
 * later claim queued behind the one stuck write). patches/mongodb@6.20.0.patch makes that write
 * fail as a closed connection, which the services already treat as the database being away.
 */
describe('a connection whose server just went away', () => {
  let mongo: Mongo;

  beforeAll(async () => {
    const silent = createLogger({ service: 'test', version: '0', level: 'silent' });
    mongo = connectMongo({
      url: process.env.MONGO_URL!,
      dbName: uniqueName('closed_conn'),
      logger: silent,
      metrics: createMetrics('test'),
    });
    await mongo.connected;
  });
  afterAll(async () => {
    await mongo?.connection.db?.dropDatabase().catch(() => undefined);
    await mongo?.close();
  });

  it('a write sent on it fails as the database being away instead of waiting forever, and the next write goes through', async () => {
    const items = mongo.connection.collection<{ _id: number }>('items');
    await items.insertOne({ _id: 1 });
    // The pool's idle connection, as a peer's close leaves it: destroyed, its 'close' not yet seen.
    for (const socket of idleSockets(mongo)) socket.destroy();

    const outcome = await Promise.race([
      items.insertOne({ _id: 2 }).then(
        () => ({ kind: 'written' as const }),
        (error: unknown) => ({ kind: 'failed' as const, error }),
      ),
      hangCeiling(),
    ]);
    expect(outcome.kind).toBe('failed');
    expect(outcome.kind === 'failed' && isDatabaseUnavailable(outcome.error)).toBe(true);

    await items.insertOne({ _id: 3 });
    expect(await items.find().sort({ _id: 1 }).toArray()).toEqual([{ _id: 1 }, { _id: 3 }]);
  });
});

/** Turns a hang into a failure that says what hung; a working driver answers long before it. */
function hangCeiling() {
  return new Promise<{ kind: 'hung' }>((resolve) =>
    setTimeout(() => resolve({ kind: 'hung' }), CEILINGS.wait).unref(),
  );
}

/**
 * The sockets of the driver's pooled connections (driver internals: the state a peer's close
 * leaves cannot be timed from outside). Fails loudly when a driver upgrade moved them, so the
 * test never passes without doing its part.
 */
function idleSockets(mongo: Mongo): import('node:net').Socket[] {
  type Internals = {
    topology?: {
      s?: {
        servers?: Map<string, { pool?: { connections?: Iterable<{ socket: import('node:net').Socket }> } }>;
      };
    };
  };
  const servers = (mongo.connection.getClient() as unknown as Internals).topology?.s?.servers;
  const sockets = [...(servers?.values() ?? [])].flatMap((server) =>
    [...(server.pool?.connections ?? [])].map((connection) => connection.socket),
  );
  if (sockets.length === 0)
    throw new Error('no pooled connection found: the driver internals this test reads have moved');
  return sockets;
}
