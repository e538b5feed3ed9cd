import { createLogger } from '@pack/logging';
import { createMetrics } from '@pack/metrics';
import { dropDatabase, uniqueName } from '@pack/testkit';
import {
  CLAIMS_COLLECTION,
  connectMongo,
  DELETE_SLICE,
  ID_CLAIMS,
  ensureProcessedEventsIndex,
  idempotent,
  ProcessedEventsSweeper,
  type Mongo,
} from '../src';

const silent = createLogger({ service: 'test', version: '0', level: 'silent' });
const DAY = 24 * 60 * 60 * 1000;
const WEEK = 7 * DAY;

describe('processed-events housekeeping on a real MongoDB-wire server', () => {
  let mongo: Mongo;
  let dbName: string;

  beforeEach(async () => {
    dbName = uniqueName('t_processed');
    mongo = connectMongo({
      url: process.env.MONGO_URL!,
      dbName,
      logger: silent,
      metrics: createMetrics('p'),
    });
    await mongo.connected;
  });

  afterEach(async () => {
    await mongo.close();
    await dropDatabase(process.env.MONGO_URL!, dbName);
  });

  const markers = () => mongo.connection.collection<{ _id: string; at: Date }>('processed_events');
  const sweeper = () =>
    new ProcessedEventsSweeper({
      connection: mongo.connection,
      logger: silent,
      metrics: createMetrics('sweep'),
      retentionMs: WEEK,
    });

  it('removes markers older than the retention and keeps the recent ones', async () => {
    const now = Date.now();
    await markers().insertMany([
      { _id: 'c:ancient', at: new Date(now - 90 * DAY) },
      { _id: 'c:eight-days', at: new Date(now - 8 * DAY) },
      { _id: 'c:six-days', at: new Date(now - 6 * DAY) },
      { _id: 'c:an-hour', at: new Date(now - 60 * 60 * 1000) },
    ]);
    expect(await sweeper().sweep(new Date(now))).toBe(2);
    const left = await markers().find().sort({ _id: 1 }).toArray();
    expect(left.map((marker) => marker._id)).toEqual(['c:an-hour', 'c:six-days']);
  });

  it('"no collection growing without bound": id claims and other retained records go after the retention with the markers, by their own time field, indexed at start', async () => {
    const now = Date.now();
    const claims = mongo.connection.collection<{ _id: string; at: Date }>(CLAIMS_COLLECTION);
    const calls = mongo.connection.collection<{ _id: string; claimed_at: Date }>('call_claims');
    await claims.insertMany([
      { _id: 'orders:1', at: new Date(now - 30 * DAY) },
      { _id: 'orders:2', at: new Date(now - 8 * DAY) },
      { _id: 'orders:3', at: new Date(now - DAY) },
    ]);
    await calls.insertMany([
      { _id: 'old', claimed_at: new Date(now - 9 * DAY) },
      { _id: 'new', claimed_at: new Date(now - 60_000) },
    ]);
    const metrics = createMetrics('retained');
    const running = new ProcessedEventsSweeper({
      connection: mongo.connection,
      logger: silent,
      metrics,
      retentionMs: WEEK,
      retained: [ID_CLAIMS, { collection: 'call_claims', key: 'claimed_at' }],
    });
    running.start();
    await running.stop();
    expect((await claims.find().toArray()).map((one) => one._id)).toEqual(['orders:3']);
    expect((await calls.find().toArray()).map((one) => one._id)).toEqual(['new']);
    // The sweep is a range on an index (deleteInSlices), made at start.
    expect((await claims.indexes()).map((index) => index.key)).toContainEqual({ at: 1 });
    expect((await calls.indexes()).map((index) => index.key)).toContainEqual({ claimed_at: 1 });
    const text = await metrics.registry.metrics();
    expect(text).toMatch(/retained_records_swept_total\{[^}]*collection="claims"[^}]*\} 2/);
    expect(text).toMatch(/retained_records_swept_total\{[^}]*collection="call_claims"[^}]*\} 1/);
  });

  it('sweeps at start, and markers written by idempotent() are the ones it ages out', async () => {
    const handled: string[] = [];
    const handler = idempotent(mongo.connection, 'c', async (_data: unknown, envelope) => {
      handled.push(envelope.id);
    });
    const envelope = {
      specversion: '1.0' as const,
      id: 'e1',
      source: 'test',
      type: 'test.thing.happened.v1',
      time: new Date().toISOString(),
      datacontenttype: 'application/json' as const,
      correlationid: 'c',
      data: {},
    };
    await handler({}, envelope);
    await markers().updateOne({ _id: 'c:e1' }, { $set: { at: new Date(Date.now() - 8 * DAY) } });
    const running = sweeper();
    running.start();
    await running.stop();
    expect(await markers().countDocuments()).toBe(0);
    // Forgotten after the retention: a copy redelivered this late is handled again.
    await handler({}, envelope);
    expect(handled).toEqual(['e1', 'e1']);
  });

  it('indexes the marker time, with a server-side expiry where the server has TTL indexes', async () => {
    // Its own collection, with no index on `at` yet: nothing inherited from another test.
    await mongo.connection.db!.createCollection('processed_events');
    const atIndexes = async () => (await markers().indexes()).filter((candidate) => candidate.key.at === 1);
    const atIndex = async () => (await atIndexes())[0];
    expect(await atIndex()).toBeUndefined();

    const serverExpires = await ensureProcessedEventsIndex(mongo.connection, WEEK);
    expect((await atIndex())?.expireAfterSeconds).toBe(serverExpires ? 604800 : undefined);

    // A restart with another retention changes the expiry (collMod: MongoDB refuses a
    // createIndex with other options); a second replica starting alike must not fail either.
    // The driver sends an index's key as a Map (its order matters): compare it as an object.
    const plain = (indexes: unknown) =>
      (indexes as { key: Map<string, unknown> }[]).map((index) => ({
        ...index,
        key: Object.fromEntries(index.key),
      }));
    const sent: { name: string; command: Record<string, unknown> }[] = [];
    const client = mongo.connection.getClient();
    const record = (event: { commandName: string; command: Record<string, unknown> }) => {
      if (['listIndexes', 'createIndexes', 'collMod'].includes(event.commandName))
        sent.push({ name: event.commandName, command: event.command });
    };
    client.on('commandStarted', record);
    try {
      expect(await ensureProcessedEventsIndex(mongo.connection, 2 * WEEK)).toBe(serverExpires);
    } finally {
      client.off('commandStarted', record);
    }
    expect((await atIndex())?.expireAfterSeconds).toBe(serverExpires ? 1209600 : undefined);
    if (serverExpires) {
      // The index is there with one week, so its expiry changes in place (MongoDB; a server
      // without collMod has it dropped and made again), and it stays the only one on `at`.
      expect(sent.slice(0, 2).map((entry) => entry.name)).toEqual(['listIndexes', 'collMod']);
      expect(sent[1]!.command.index).toEqual({ keyPattern: { at: 1 }, expireAfterSeconds: 1209600 });
      expect(await atIndexes()).toHaveLength(1);
    } else {
      // FerretDB v1: no TTL (the plain index has no expiry), so the two weeks are asked for
      // again and refused with NotImplemented; the plain index stays.
      expect(sent.map((entry) => entry.name)).toEqual(['listIndexes', 'createIndexes', 'createIndexes']);
      expect(plain(sent[1]!.command.indexes)).toEqual([
        { key: { at: 1 }, name: 'at_1', expireAfterSeconds: 1209600 },
      ]);
      expect(plain(sent[2]!.command.indexes)).toEqual([{ key: { at: 1 }, name: 'at_1' }]);
    }
    expect(await ensureProcessedEventsIndex(mongo.connection, 2 * WEEK)).toBe(serverExpires);
  });

  it('"every sweep and trim works at any size": sweeps 100,000 markers, more than one delete may take, in slices of 50,000, and keeps the recent ones', async () => {
    // On our FerretDB one deleteMany of more than 65,535 documents fails ("extended protocol
    // limited to 65535 parameters"): the sweep deletes in slices (deleteInSlices). Two full
    // slices and the last one: each slice scans what is left on FerretDB, so more slices add
    // time, not another path.
    await ensureProcessedEventsIndex(mongo.connection, WEEK);
    const now = Date.now();
    const old = now - 30 * DAY;
    const total = 2 * DELETE_SLICE;
    expect(total).toBeGreaterThan(65_535);
    const inserting = Date.now();
    for (let from = 0; from < total; from += 10_000) {
      await markers().insertMany(
        Array.from({ length: 10_000 }, (_, i) => ({
          _id: `c:old-${from + i}`,
          at: new Date(old + from + i),
        })),
        { ordered: false },
      );
    }
    await markers().insertMany([
      { _id: 'c:six-days', at: new Date(now - 6 * DAY) },
      { _id: 'c:an-hour', at: new Date(now - 60 * 60 * 1000) },
    ]);
    const inserted = Date.now() - inserting;

    const commands: string[] = [];
    const client = mongo.connection.getClient();
    const record = (event: { commandName: string }) => commands.push(event.commandName);
    client.on('commandStarted', record);
    const sweeping = Date.now();
    try {
      expect(await sweeper().sweep(new Date(now))).toBe(total);
    } finally {
      client.off('commandStarted', record);
    }
    const swept = Date.now() - sweeping;
    // Two commands per slice (find the 50,000th marker's time, delete up to it), one more slice for the rest.
    const slices = total / DELETE_SLICE + 1;
    expect(commands).toEqual(Array.from({ length: slices }, () => ['find', 'delete']).flat());
    expect((await markers().find().sort({ at: 1 }).toArray()).map((marker) => marker._id)).toEqual([
      'c:six-days',
      'c:an-hour',
    ]);
    process.stdout.write(
      `${total} markers: inserted in ${inserted} ms, swept in ${swept} ms (${commands.length} commands)\n`,
    );
  });
});
