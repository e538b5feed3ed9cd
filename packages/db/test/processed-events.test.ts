import { createLogger } from '@pack/logging';
import { createMetrics } from '@pack/metrics';
import { dropDatabase, uniqueName } from '@pack/testkit';
import {
  connectMongo,
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
    const serverExpires = await ensureProcessedEventsIndex(mongo.connection, WEEK);
    // A second replica, or a restart with another retention, must not fail.
    expect(await ensureProcessedEventsIndex(mongo.connection, 2 * WEEK)).toBe(serverExpires);
    const index = (await markers().indexes()).find((candidate) => candidate.key.at === 1);
    expect(index?.expireAfterSeconds).toBe(serverExpires ? (2 * WEEK) / 1000 : undefined);
  });
});
