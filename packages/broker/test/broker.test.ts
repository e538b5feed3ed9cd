import amqp from 'amqplib';
import { createEnvelope, events, type Envelope } from '@pack/contracts';
import { createLogger, currentContext } from '@pack/logging';
import { createMetrics } from '@pack/metrics';
import { deleteQueues, TcpProxy, uniqueName, waitFor } from '@pack/testkit';
import { Broker, BrokerUnavailableError, topologyNames, type ConsumerSpec } from '../src';

const amqpUrl = () => process.env.AMQP_URL!;
const silent = createLogger({ service: 'test', version: '0', level: 'silent' });

function settingsChanged(version: number, correlationId = 'corr') {
  return createEnvelope(
    events.settingsChanged,
    { groups: ['currency'], version, changed_by: 1 },
    { source: 'test', correlationId },
  );
}

describe('Broker on a real RabbitMQ', () => {
  const brokers: Broker[] = [];
  const queues: string[] = [];
  let namespace: string;

  function makeBroker(url = amqpUrl()) {
    const broker = new Broker({
      url,
      namespace,
      service: 'test',
      logger: silent,
      metrics: createMetrics('test'),
      deliveryLimit: 5,
    });
    brokers.push(broker);
    return broker;
  }

  function consumer(
    name: string,
    handler: ConsumerSpec['handler'],
    extra: Partial<ConsumerSpec> = {},
  ): ConsumerSpec {
    const names = topologyNames(namespace);
    queues.push(names.queue(name), names.retryQueue(name), names.deadLetterQueue(name));
    return { name, events: [events.settingsChanged], handler, retryDelayMs: 50, maxAttempts: 3, ...extra };
  }

  async function deadLetters(name: string): Promise<string[]> {
    const connection = await amqp.connect(amqpUrl());
    const channel = await connection.createChannel();
    const bodies: string[] = [];
    for (;;) {
      const message = await channel.get(topologyNames(namespace).deadLetterQueue(name), { noAck: true });
      if (!message) break;
      bodies.push(message.content.toString());
    }
    await connection.close();
    return bodies;
  }

  beforeEach(() => {
    namespace = uniqueName('t');
  });

  afterEach(async () => {
    for (const broker of brokers.splice(0)) await broker.close();
    await deleteQueues(amqpUrl(), queues.splice(0));
  });

  it('delivers a published event to a consumer, with its correlation id in the handler context', async () => {
    const received: { envelope: Envelope; correlation?: string }[] = [];
    const broker = makeBroker();
    broker.consume(
      consumer('c1', async (envelope) => {
        received.push({ envelope, correlation: currentContext()?.correlationId });
      }),
    );
    broker.start();
    await waitFor(() => broker.isReady(), { what: 'broker ready' });
    const event = settingsChanged(1, 'corr-42');
    await broker.publish(event);
    await waitFor(() => received.length === 1, { what: 'delivery' });
    expect(received[0]).toEqual({ envelope: event, correlation: 'corr-42' });
  });

  it('dead-letters a message it cannot parse instead of requeueing it', async () => {
    const handled: Envelope[] = [];
    const broker = makeBroker();
    broker.consume(
      consumer('c2', async (envelope) => {
        handled.push(envelope);
      }),
    );
    broker.start();
    await waitFor(() => broker.isReady());
    const connection = await amqp.connect(amqpUrl());
    const channel = await connection.createConfirmChannel();
    channel.publish(`${namespace}.events`, events.settingsChanged.type, Buffer.from('{"not":"an envelope"}'));
    channel.publish(`${namespace}.events`, events.settingsChanged.type, Buffer.from('not json at all'));
    await channel.waitForConfirms();
    await connection.close();
    await broker.publish(settingsChanged(2));
    await waitFor(() => handled.length === 1);
    const dead = await waitFor(
      async () => {
        const bodies = await deadLetters('c2');
        return bodies.length === 2 ? bodies : undefined;
      },
      { what: 'two dead letters' },
    );
    expect(dead).toEqual(['{"not":"an envelope"}', 'not json at all']);
  });

  it('retries a failing handler after a delay, then dead-letters it after the last attempt', async () => {
    const attempts = new Map<number, number>();
    const broker = makeBroker();
    broker.consume(
      consumer('c3', async (envelope) => {
        const version = (envelope.data as { version: number }).version;
        attempts.set(version, (attempts.get(version) ?? 0) + 1);
        if (version === 1 && attempts.get(1)! < 2) throw new Error('transient');
        if (version === 2) throw new Error('permanent');
      }),
    );
    broker.start();
    await waitFor(() => broker.isReady());
    await broker.publish(settingsChanged(1));
    await broker.publish(settingsChanged(2));
    const dead = await waitFor(
      async () => {
        const bodies = await deadLetters('c3');
        return bodies.length > 0 ? bodies : undefined;
      },
      { what: 'dead letter' },
    );
    expect(attempts.get(1)).toBe(2);
    expect(attempts.get(2)).toBe(3);
    expect(dead).toHaveLength(1);
    expect(JSON.parse(dead[0]!).data.version).toBe(2);
  });

  it('shares work between replicas, but gives every replica its own copy of a broadcast', async () => {
    const shared: string[] = [];
    const broadcast: string[] = [];
    for (const replica of ['r1', 'r2']) {
      const broker = makeBroker();
      broker.consume(
        consumer('work', async () => {
          shared.push(replica);
        }),
      );
      broker.consume({
        ...consumer('cache', async () => {
          broadcast.push(replica);
        }),
        broadcast: true,
      });
      broker.start();
      await waitFor(() => broker.isReady());
    }
    await brokers[0]!.publish(settingsChanged(1));
    await waitFor(() => broadcast.length === 2 && shared.length === 1, { what: 'deliveries' });
    expect(broadcast.sort()).toEqual(['r1', 'r2']);
    await brokers[1]!.close();
    expect(brokers[0]!.declaredQueues().some((queue) => queue.includes('cache'))).toBe(false);
  });

  it('reconnects by itself after the broker connection is lost, and refuses to publish meanwhile', async () => {
    const proxy = await TcpProxy.forUrl(amqpUrl()).start();
    try {
      const received: Envelope[] = [];
      const broker = makeBroker(proxy.rewrite(amqpUrl()));
      broker.consume(
        consumer('c4', async (envelope) => {
          received.push(envelope);
        }),
      );
      broker.start();
      await waitFor(() => broker.isReady());
      proxy.cut();
      await waitFor(() => !broker.isReady(), { what: 'broker to notice the outage' });
      await expect(broker.publish(settingsChanged(1))).rejects.toBeInstanceOf(BrokerUnavailableError);
      proxy.restore();
      await waitFor(() => broker.isReady(), { what: 'reconnect' });
      await broker.publish(settingsChanged(2));
      await waitFor(() => received.length === 1);
      expect((received[0]!.data as { version: number }).version).toBe(2);
    } finally {
      await proxy.stop();
    }
  });
});
