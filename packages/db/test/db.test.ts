import { Schema } from 'mongoose';
import { Broker } from '@pack/broker';
import { createEnvelope, events } from '@pack/contracts';
import { ConflictError } from '@pack/errors';
import { createLogger } from '@pack/logging';
import { createMetrics } from '@pack/metrics';
import { dropDatabase, EventTap, TcpProxy, uniqueName, waitFor } from '@pack/testkit';
import {
  claim,
  releaseClaim,
  connectMongo,
  dropReplacedIndex,
  idempotent,
  mapDatabaseError,
  nextId,
  OUTBOX_FIELD,
  OUTBOX_PENDING_FIELD,
  OutboxRelay,
  outboxSchemaFields,
  withOutbox,
  type Mongo,
} from '../src';

const silent = createLogger({ service: 'test', version: '0', level: 'silent' });
const mongoUrl = () => process.env.MONGO_URL!;
const amqpUrl = () => process.env.AMQP_URL!;

function changed(version: number) {
  return createEnvelope(
    events.settingsChanged,
    { groups: ['smtp'], version, changed_by: 1 },
    { source: 'test', correlationId: `c${version}` },
  );
}

describe('database kit on a real MongoDB-wire server', () => {
  let mongo: Mongo;
  let dbName: string;

  beforeAll(async () => {
    dbName = uniqueName('t_db');
    mongo = connectMongo({ url: mongoUrl(), dbName, logger: silent, metrics: createMetrics('db-test') });
    await mongo.connected;
  });

  afterAll(async () => {
    await mongo.close();
    await dropDatabase(mongoUrl(), dbName);
  });

  it('gives unique increasing integer ids under concurrency', async () => {
    const ids = await Promise.all(Array.from({ length: 40 }, () => nextId(mongo.connection, 'things')));
    expect(new Set(ids).size).toBe(40);
    expect(Math.min(...ids)).toBe(1);
    expect(Math.max(...ids)).toBe(40);
  });

  it('drops an index a newer one replaces, and nothing when it is already gone', async () => {
    const collection = mongo.connection.collection('reindexed');
    await dropReplacedIndex(collection, 'old'); // no collection yet
    await collection.createIndex({ a: 1 }, { name: 'old' });
    await collection.createIndex({ a: 1, b: 1 }, { name: 'new' });
    await Promise.all([dropReplacedIndex(collection, 'old'), dropReplacedIndex(collection, 'old')]); // two replicas
    expect((await collection.indexes()).map((index) => index.name).sort()).toEqual(['_id_', 'new']);
    await expect(dropReplacedIndex(collection, '_id_')).rejects.toBeTruthy(); // other errors still throw
  });

  it('lets exactly one of many concurrent writers win a claim', async () => {
    const results = await Promise.all(
      Array.from({ length: 20 }, () => claim(mongo.connection, 'transition:1:v1')),
    );
    expect(results.filter(Boolean)).toHaveLength(1);
    await releaseClaim(mongo.connection, 'transition:1:v1');
    expect(await claim(mongo.connection, 'transition:1:v1')).toBe(true);
  });

  it('maps a duplicate key to a 409 conflict', async () => {
    const Model = mongo.connection.model('Unique', new Schema({ name: { type: String, unique: true } }));
    await Model.init();
    await Model.create({ name: 'a' });
    const error = await Model.create({ name: 'a' }).catch((caught: unknown) => caught);
    const mapped = mapDatabaseError(error);
    expect(mapped).toBeInstanceOf(ConflictError);
    expect(mapped?.status).toBe(409);
    expect(await Model.countDocuments()).toBe(1);
  });

  it('counts the database commands it sends, by command', async () => {
    const before = mongo.commandCounts().find ?? 0;
    await mongo.connection.collection('things').findOne({ _id: 'nothing' as never });
    await mongo.connection.collection('things').findOne({ _id: 'nothing' as never });
    expect((mongo.commandCounts().find ?? 0) - before).toBe(2);
  });

  it('handles a redelivered event once', async () => {
    const seen: string[] = [];
    const handler = idempotent(mongo.connection, 'test-consumer', async (_data, envelope) => {
      seen.push(envelope.id);
    });
    const event = changed(1);
    await handler(event.data, event);
    await handler(event.data, event);
    const other = changed(2);
    await handler(other.data, other);
    expect(seen).toEqual([event.id, expect.any(String)]);
  });

  describe('outbox', () => {
    function brokerFor(namespace: string, url = amqpUrl()) {
      return new Broker({ url, namespace, service: 'test', logger: silent, metrics: createMetrics('b') });
    }

    function relayFor(broker: Broker) {
      return new OutboxRelay({
        connection: mongo.connection,
        broker,
        logger: silent,
        metrics: createMetrics('relay'),
        collections: ['docs'],
        sweepIntervalMs: 200,
      });
    }

    const Doc = () =>
      mongo.connection.models.Doc ??
      mongo.connection.model(
        'Doc',
        new Schema({ _id: Number, value: String, ...outboxSchemaFields }, { collection: 'docs' }),
      );

    it('keeps an event written while RabbitMQ is down and delivers it exactly once when it is back', async () => {
      const namespace = uniqueName('t');
      const proxy = await TcpProxy.forUrl(amqpUrl()).start();
      const broker = brokerFor(namespace, proxy.rewrite(amqpUrl()));
      const relay = relayFor(broker);
      const observer = await EventTap.start(amqpUrl(), namespace);
      try {
        broker.start();
        await waitFor(() => broker.isReady());
        relay.start();
        proxy.cut();
        await waitFor(() => !broker.isReady());

        // The change and its event: one single-document update.
        const event = changed(7);
        await Doc().collection.insertOne({ _id: 1 as never, value: 'old' });
        await Doc().collection.updateOne({ _id: 1 as never }, withOutbox({ $set: { value: 'new' } }, event));
        relay.kick();
        await relay.flush();
        const pending = await Doc().collection.findOne({ _id: 1 as never });
        expect(pending).toMatchObject({ value: 'new', [OUTBOX_PENDING_FIELD]: true });
        expect(pending?.[OUTBOX_FIELD]).toHaveLength(1);

        proxy.restore();
        await observer.waitFor((received) => received.length > 0, 'the event after the broker came back');
        await waitFor(
          async () => {
            const doc = await Doc().collection.findOne({ _id: 1 as never });
            return doc?.[OUTBOX_PENDING_FIELD] === false;
          },
          { what: 'the outbox to be cleared' },
        );
        const cleared = await Doc().collection.findOne({ _id: 1 as never });
        expect(cleared?.[OUTBOX_FIELD]).toEqual([]);
        await relay.flush();
        const received = await observer.drain();
        expect(received.map((e) => e.id)).toEqual([event.id]);
        expect(received[0]).toMatchObject(event);
      } finally {
        await relay.stop();
        await broker.close();
        await observer.stop();
        await proxy.stop();
      }
    });

    it('delivers what a crashed process left behind, when the next relay sweeps', async () => {
      const namespace = uniqueName('t');
      const observer = await EventTap.start(amqpUrl(), namespace);
      // The "crashed" process wrote two changes with events and never relayed them.
      const first = changed(1);
      const second = changed(2);
      await Doc().collection.insertOne({ _id: 2 as never, value: 'a' });
      await Doc().collection.updateOne({ _id: 2 as never }, withOutbox({ $set: { value: 'b' } }, first));
      await Doc().collection.updateOne({ _id: 2 as never }, withOutbox({ $set: { value: 'c' } }, second));

      const broker = brokerFor(namespace);
      const relay = relayFor(broker);
      try {
        broker.start();
        relay.start();
        const received = await observer.waitFor((events) => events.length === 2, 'both events');
        expect(received.map((e) => e.id)).toEqual([first.id, second.id]);
        await waitFor(
          async () => (await Doc().collection.findOne({ _id: 2 as never }))?.[OUTBOX_PENDING_FIELD] === false,
        );
      } finally {
        await relay.stop();
        await broker.close();
        await observer.stop();
      }
    });

    it('runs a document step before relaying its events; a step that fails keeps them pending and runs again', async () => {
      const namespace = uniqueName('t');
      const observer = await EventTap.start(amqpUrl(), namespace);
      const event = changed(3);
      await Doc().collection.insertOne({ _id: 3 as never, value: 'a' });
      await Doc().collection.updateOne({ _id: 3 as never }, withOutbox({ $set: { value: 'b' } }, event));
      const broker = brokerFor(namespace);
      const relay = relayFor(broker);
      const steps: unknown[] = [];
      let failures = 1;
      relay.beforePublishing('docs', {
        fields: ['value'],
        run: async (document) => {
          steps.push({ value: document.value, pending: (document[OUTBOX_FIELD] as unknown[]).length });
          if (failures-- > 0) throw new Error('database away');
          await Promise.resolve();
        },
      });
      try {
        broker.start();
        await waitFor(() => broker.isReady());
        relay.start();
        const received = await observer.waitFor((events) => events.length === 1, 'the event');
        expect(received[0]!.id).toBe(event.id);
        // Failed once (the event stayed), then ran again while the event was still there.
        expect(steps.slice(0, 2)).toEqual([
          { value: 'b', pending: 1 },
          { value: 'b', pending: 1 },
        ]);
        await waitFor(
          async () => (await Doc().collection.findOne({ _id: 3 as never }))?.[OUTBOX_PENDING_FIELD] === false,
        );
      } finally {
        await relay.stop();
        await broker.close();
        await observer.stop();
      }
    });

    it('relays events that have no owning document from the outbox collection', async () => {
      const namespace = uniqueName('t');
      const observer = await EventTap.start(amqpUrl(), namespace);
      const broker = brokerFor(namespace);
      const relay = relayFor(broker);
      try {
        broker.start();
        await waitFor(() => broker.isReady());
        relay.start();
        const event = changed(9);
        await relay.insert(event);
        const received = await observer.waitFor((events) => events.length === 1, 'the event');
        expect(received[0]!.id).toBe(event.id);
        await relay.flush();
        expect(await mongo.connection.collection('outbox').countDocuments({})).toBe(0);
      } finally {
        await relay.stop();
        await broker.close();
        await observer.stop();
      }
    });
  });
});
