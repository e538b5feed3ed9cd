import amqp from 'amqplib';
import { createEnvelope, events } from '@pack/contracts';
import { createLogger } from '@pack/logging';
import { createMetrics } from '@pack/metrics';
import { CEILINGS, deleteQueues, LogCapture, uniqueName, waitFor } from '@pack/testkit';
import { Broker, PublishNackedError, topologyNames, type BrokerOptions } from '../src';

const amqpUrl = () => process.env.AMQP_URL!;

/**
 * A nack means "not stored", and on a cluster it comes while a quorum queue's leader has just
 * died: RabbitMQ 3.10 then nacks every later publish to that queue on the same channel (decision
 * 0049). Here one RabbitMQ nacks for another reason that passes: a quorum queue with
 * `x-overflow: reject-publish` that is full until the test takes its one message.
 */
describe('a publish the broker nacks', () => {
  const brokers: Broker[] = [];
  const queues: string[] = [];
  let namespace: string;

  async function withChannel<T>(use: (channel: amqp.Channel) => Promise<T>): Promise<T> {
    const connection = await amqp.connect(amqpUrl());
    try {
      return await use(await connection.createChannel());
    } finally {
      await connection.close();
    }
  }

  /**
   * A quorum queue bound to settings.changed that refuses publishes while it holds one message
   * (a quorum queue refuses once it holds more than `x-max-length`; the first one gets in).
   */
  async function fullQueue(): Promise<string> {
    const names = topologyNames(namespace);
    const queue = `${namespace}.full`;
    queues.push(queue);
    await withChannel(async (channel) => {
      await channel.assertExchange(names.events, 'topic', { durable: true });
      await channel.assertQueue(queue, {
        durable: true,
        arguments: { 'x-queue-type': 'quorum', 'x-max-length': 0, 'x-overflow': 'reject-publish' },
      });
      await channel.bindQueue(queue, names.events, events.settingsChanged.type);
    });
    const connection = await amqp.connect(amqpUrl());
    try {
      const channel = await connection.createConfirmChannel();
      channel.sendToQueue(queue, Buffer.from('blocker'), { persistent: true });
      await channel.waitForConfirms();
    } finally {
      await connection.close();
    }
    return queue;
  }

  async function startBroker(options: Partial<BrokerOptions> = {}): Promise<Broker> {
    const broker = new Broker({
      url: amqpUrl(),
      namespace,
      service: 'test',
      logger: createLogger({ service: 'test', version: '0', level: 'silent' }),
      metrics: createMetrics('test'),
      ...options,
    });
    brokers.push(broker);
    broker.start();
    await waitFor(() => broker.isReady(), { what: 'broker ready' });
    return broker;
  }

  const event = () =>
    createEnvelope(
      events.settingsChanged,
      { groups: ['currency'], version: 1, changed_by: 1 },
      { source: 'test', correlationId: 'c' },
    );

  beforeEach(() => {
    namespace = uniqueName('t');
  });

  afterEach(async () => {
    for (const broker of brokers.splice(0)) await broker.close();
    await deleteQueues(amqpUrl(), queues.splice(0));
  });

  it('is published again on a fresh channel after a short backoff, and is confirmed once the queue takes it, instead of failing at once', async () => {
    const queue = await fullQueue();
    const logs = new LogCapture();
    // Kept trying for as long as only a hang would take: the queue making room ends the nacks.
    const broker = await startBroker({
      logger: createLogger({ service: 'test', version: '0', level: 'warn', destination: logs }),
      nackRetryMs: CEILINGS.wait,
    });
    const published = event();
    let outcome = 'pending';
    const publishing = broker.publish(published).then(
      () => (outcome = 'confirmed'),
      (error: Error) => (outcome = `failed: ${error.message}`),
    );
    // Nacked at once, and again on a fresh channel: still trying after the second nack.
    const nacks = () => logs.records().filter((record) => /nacked a publish/.test(String(record.msg))).length;
    await waitFor(() => nacks() >= 2, { what: 'the publish nacked twice' });
    expect(outcome).toBe('pending');
    // The queue makes room: the next try, on a fresh channel, is stored and confirmed.
    const blocker = await withChannel((channel) => channel.get(queue, { noAck: true }));
    expect(blocker && blocker.content.toString()).toBe('blocker');
    await publishing;
    expect(outcome).toBe('confirmed');
    const stored = await withChannel((channel) => channel.get(queue, { noAck: true }));
    expect(stored && stored.properties.messageId).toBe(published.id);
  });

  it('fails with PublishNackedError once the broker kept refusing it for nackRetryMs', async () => {
    await fullQueue();
    const broker = await startBroker({ nackRetryMs: 600 });
    const started = Date.now();
    await expect(broker.publish(event())).rejects.toBeInstanceOf(PublishNackedError);
    const waited = Date.now() - started;
    // Not at the first nack: it kept trying for most of nackRetryMs (a retry forever meets the test's ceiling).
    expect(waited).toBeGreaterThanOrEqual(200);
  });
});
