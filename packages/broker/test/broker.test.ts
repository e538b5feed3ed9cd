import net, { type Socket } from 'node:net';
import amqp from 'amqplib';
import { createEnvelope, events, type Envelope, type EventData } from '@pack/contracts';
import { createLogger, currentContext } from '@pack/logging';
import { createMetrics } from '@pack/metrics';
import { deleteQueues, LogCapture, TcpProxy, uniqueName, waitFor } from '@pack/testkit';
import {
  Broker,
  BrokerUnavailableError,
  on,
  topologyNames,
  type BrokerOptions,
  type ConsumerSpec,
  type EventHandlerFn,
} from '../src';

type SettingsChanged = EventData<typeof events.settingsChanged>;

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

  function makeBroker(url = amqpUrl(), options: Partial<BrokerOptions> = {}) {
    const broker = new Broker({
      url,
      namespace,
      service: 'test',
      logger: silent,
      metrics: createMetrics('test'),
      deliveryLimit: 5,
      ...options,
    });
    brokers.push(broker);
    return broker;
  }

  /** A consumer of settings.changed whose queues the test removes afterwards. */
  function consumer(
    name: string,
    handle: EventHandlerFn<SettingsChanged>,
    extra: Partial<ConsumerSpec> = {},
  ): ConsumerSpec {
    const names = topologyNames(namespace);
    queues.push(names.queue(name), names.retryQueue(name), names.deadLetterQueue(name));
    return {
      name,
      handlers: [on(events.settingsChanged, handle)],
      retryDelayMs: 50,
      maxAttempts: 3,
      ...extra,
    };
  }

  async function withChannel<T>(use: (channel: amqp.Channel) => Promise<T>): Promise<T> {
    const connection = await amqp.connect(amqpUrl());
    try {
      return await use(await connection.createChannel());
    } finally {
      await connection.close();
    }
  }

  async function deadLetters(name: string): Promise<amqp.GetMessage[]> {
    return withChannel(async (channel) => {
      const messages: amqp.GetMessage[] = [];
      for (;;) {
        const message = await channel.get(topologyNames(namespace).deadLetterQueue(name), { noAck: true });
        if (!message) return messages;
        messages.push(message);
      }
    });
  }

  const queueState = (queue: string) => withChannel((channel) => channel.checkQueue(queue));

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
      consumer('c1', async (_data, envelope) => {
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

  it('hands each event type to its own handler with the payload parsed and typed', async () => {
    const seen: string[] = [];
    const broker = makeBroker();
    broker.consume({
      ...consumer('typed', async () => undefined),
      handlers: [
        on(events.settingsChanged, async (data) => {
          seen.push(`settings v${data.version} by ${data.changed_by}`);
        }),
        on(events.changeInstanceValidationDecided, async (data) => {
          seen.push(`${data.decision} #${data.change_instance_id}: ${data.reasons.join(', ')}`);
        }),
      ],
    });
    broker.start();
    await waitFor(() => broker.isReady());
    await broker.publish(settingsChanged(3));
    await broker.publish(
      createEnvelope(
        events.changeInstanceValidationDecided,
        { change_instance_id: 7, decision: 'reject', reasons: ['no owner'] },
        { source: 'test', correlationId: 'c' },
      ),
    );
    await waitFor(() => seen.length === 2, { what: 'both events' });
    expect(seen.sort()).toEqual(['reject #7: no owner', 'settings v3 by 1']);
  });

  it('dead-letters a message it cannot parse, or whose payload breaks its schema, without retrying it', async () => {
    const handled: number[] = [];
    const broker = makeBroker();
    broker.consume(
      consumer('c2', async (data) => {
        handled.push(data.version);
      }),
    );
    broker.start();
    await waitFor(() => broker.isReady());
    const badPayload = {
      ...settingsChanged(1),
      data: { groups: ['currency'], version: 'one', changed_by: 1 },
    };
    const bodies = ['{"not":"an envelope"}', 'not json at all', JSON.stringify(badPayload)];
    const connection = await amqp.connect(amqpUrl());
    const channel = await connection.createConfirmChannel();
    for (const body of bodies)
      channel.publish(`${namespace}.events`, events.settingsChanged.type, Buffer.from(body));
    await channel.waitForConfirms();
    await connection.close();
    await broker.publish(settingsChanged(2));
    await waitFor(() => handled.length === 1);
    const dead = await waitFor(
      async () => {
        const messages = await deadLetters('c2');
        return messages.length === 3 ? messages : undefined;
      },
      { what: 'three dead letters' },
    );
    expect(dead.map((message) => message.content.toString())).toEqual(bodies);
    // Rejected at the first delivery: never sent round the retry queue.
    for (const message of dead) expect(message.properties.headers?.['x-retry-count']).toBeUndefined();
    expect(handled).toEqual([2]);
  });

  it('reports its connection, backlog and dead letters as gauges read at scrape time', async () => {
    const metrics = createMetrics('test');
    const idleMetrics = createMetrics('test');
    makeBroker(amqpUrl(), { metrics: idleMetrics });
    const broker = makeBroker(amqpUrl(), { metrics });
    const gauges = async () => {
      const text = await metrics.registry.metrics();
      const value = (name: string) =>
        new RegExp(`^${name}\\{[^}]*queue="${namespace}\\.c-depth"[^}]*\\} (\\d+)$`, 'm').exec(text)?.[1];
      return {
        connected: /^broker_connected\{[^}]*\} (\d+)$/m.exec(text)?.[1],
        backlog: value('broker_queue_messages'),
        dead: value('broker_dead_letter_messages'),
      };
    };
    let release: () => void = () => undefined;
    const blocked = new Promise<void>((resolve) => (release = resolve));
    broker.consume(consumer('c-depth', () => blocked, { prefetch: 1 }));
    broker.start();
    await waitFor(() => broker.isReady());
    // One invalid message (dead-lettered at once), one handled slowly, two waiting behind it.
    const connection = await amqp.connect(amqpUrl());
    const channel = await connection.createConfirmChannel();
    channel.publish(`${namespace}.events`, events.settingsChanged.type, Buffer.from('not json'));
    await channel.waitForConfirms();
    await connection.close();
    for (let version = 1; version <= 3; version += 1) await broker.publish(settingsChanged(version));
    const seen = await waitFor(
      async () => {
        const now = await gauges();
        return now.dead === '1' && now.backlog === '2' && now;
      },
      { what: 'one dead letter and a backlog of two' },
    );
    expect(seen).toEqual({ connected: '1', backlog: '2', dead: '1' });
    release();
    await waitFor(async () => (await gauges()).backlog === '0', { what: 'the backlog to drain' });
    // A broker that was never started (the gateway's) exports none of these: nothing to alert on.
    const idleText = await idleMetrics.registry.metrics();
    for (const name of ['broker_connected', 'broker_queue_messages', 'broker_dead_letter_messages'])
      expect(idleText).not.toContain(name);
  });

  it('retries a failing handler after a delay, then dead-letters it after the last attempt', async () => {
    const attempts = new Map<number, number>();
    const broker = makeBroker();
    broker.consume(
      consumer('c3', async ({ version }) => {
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
    expect(JSON.parse(dead[0]!.content.toString()).data.version).toBe(2);
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

  it('a connection the broker still holds (its node cut off, not yet noticed there) does not stop the reconnect: a broadcast queue is new on every connection', async () => {
    // A proxy whose client side can be dropped while the broker's side stays open and silent, as
    // when a node is cut off: the client gives up, the broker keeps the old connection (and its
    // exclusive queues) until its own heartbeat check, seconds later.
    const target = new URL(amqpUrl());
    const pairs: { client: net.Socket; upstream: net.Socket }[] = [];
    const proxy = net.createServer((client) => {
      const upstream = net.connect(Number(target.port || 5672), target.hostname);
      client.on('error', () => undefined);
      upstream.on('error', () => undefined);
      client.pipe(upstream).pipe(client);
      pairs.push({ client, upstream });
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    const url = new URL(amqpUrl());
    url.hostname = '127.0.0.1';
    url.port = String((proxy.address() as net.AddressInfo).port);
    try {
      const received: number[] = [];
      const broker = makeBroker(url.toString());
      broker.consume({
        ...consumer('cache-cut', async (data) => {
          received.push(data.version);
        }),
        broadcast: true,
      });
      broker.start();
      await waitFor(() => broker.isReady());
      const [old] = pairs.splice(0);
      let oldClosedByBroker = false;
      old!.upstream.on('close', () => (oldClosedByBroker = true));
      old!.client.unpipe(old!.upstream);
      old!.upstream.unpipe(old!.client);
      old!.client.destroy();
      await waitFor(() => !broker.isReady(), { what: 'the client to give the connection up' });
      await waitFor(() => broker.isReady(), { what: 'the reconnect' });
      // Connected again while the broker still holds the old connection, not once it let it go.
      expect(oldClosedByBroker).toBe(false);
      await broker.publish(settingsChanged(7));
      await waitFor(() => received.includes(7), { what: 'the broadcast on the new connection' });
      old!.upstream.destroy();
    } finally {
      for (const { client, upstream } of pairs) {
        client.destroy();
        upstream.destroy();
      }
      proxy.close();
    }
  });

  it('a connection given up for missed heartbeats is reset at once, not left half-closed with the process until TCP gives up', async () => {
    // A proxy that goes silent, as a node cut off does: bytes go nowhere either way and the proxy
    // never closes its side, so a client that only ends its socket keeps it open.
    const target = new URL(amqpUrl());
    const accepted: { client: net.Socket; upstream: net.Socket; ended: boolean; reset: boolean }[] = [];
    const proxy = net.createServer({ allowHalfOpen: true }, (client) => {
      const upstream = net.connect(Number(target.port || 5672), target.hostname);
      const pair = { client, upstream, ended: false, reset: false };
      client.on('end', () => (pair.ended = true));
      client.on('error', (error: NodeJS.ErrnoException) => (pair.reset = error.code === 'ECONNRESET'));
      upstream.on('error', () => undefined);
      client.pipe(upstream).pipe(client);
      accepted.push(pair);
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    const url = new URL(amqpUrl());
    url.hostname = '127.0.0.1';
    url.port = String((proxy.address() as net.AddressInfo).port);
    url.searchParams.set('heartbeat', '1');
    try {
      const broker = makeBroker(url.toString());
      broker.start();
      await waitFor(() => broker.isReady());
      const silent = accepted[0]!;
      silent.client.unpipe(silent.upstream);
      silent.upstream.unpipe(silent.client);
      silent.client.resume(); // read and dropped: nothing reaches the broker
      await waitFor(() => silent.reset || silent.ended, {
        what: 'the client to give the silent connection up',
      });
      expect({ reset: silent.reset, ended: silent.ended }).toEqual({ reset: true, ended: false });
    } finally {
      for (const { client, upstream } of accepted) {
        client.destroy();
        upstream.destroy();
      }
      proxy.close();
    }
  });

  it('reconnects by itself after the broker connection is lost, and refuses to publish meanwhile', async () => {
    const proxy = await TcpProxy.forUrl(amqpUrl()).start();
    try {
      const received: SettingsChanged[] = [];
      const broker = makeBroker(proxy.rewrite(amqpUrl()));
      broker.consume(
        consumer('c4', async (data) => {
          received.push(data);
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
      expect(received.map((data) => data.version)).toEqual([2]);
    } finally {
      await proxy.stop();
    }
  });

  it('given several node URLs, a lost node costs one reconnect to another: declared again, consuming again (decision 0049)', async () => {
    // Two "nodes": proxies to the one RabbitMQ, each cut on its own.
    const [first, second] = await Promise.all([
      TcpProxy.forUrl(amqpUrl()).start(),
      TcpProxy.forUrl(amqpUrl()).start(),
    ]);
    try {
      const received: number[] = [];
      const broker = makeBroker(`${first.rewrite(amqpUrl())},${second.rewrite(amqpUrl())}`);
      broker.consume(consumer('c4-nodes', async (data) => void received.push(data.version)));
      // The first node is down from the start: whichever the client tries first, it ends on the second.
      first.cut();
      broker.start();
      await waitFor(() => broker.isReady(), { what: 'connected to the second node' });
      await broker.publish(settingsChanged(1));
      await waitFor(() => received.length === 1);
      // Now the second goes, for good, and the first is back.
      first.restore();
      second.cut();
      await waitFor(() => !broker.isReady(), { what: 'broker to notice the lost node' });
      await waitFor(() => broker.isReady(), { what: 'reconnected to the first node' });
      await broker.publish(settingsChanged(2));
      await waitFor(() => received.includes(2), { what: 'the consumer consuming again' });
      // (1 may come twice: its ack can be lost with the node, and the broker redelivers it.)
      expect([...new Set(received)]).toEqual([1, 2]);
      // The next attempt went to the other node at once, not back to the lost one.
      expect(second.refused).toBe(0);
    } finally {
      await Promise.all([first.stop(), second.stop()]);
    }
  });

  /** A broker whose consumer has started handling version 1 and waits until released. */
  async function startBlockedConsumer(name: string, options: Partial<BrokerOptions> = {}) {
    const release = deferred();
    const started: number[] = [];
    const finished: number[] = [];
    const broker = makeBroker(amqpUrl(), options);
    broker.consume(
      consumer(name, async ({ version }) => {
        started.push(version);
        await release.promise;
        finished.push(version);
      }),
    );
    broker.start();
    await waitFor(() => broker.isReady());
    await broker.publish(settingsChanged(1));
    await waitFor(() => started.length === 1, { what: 'handler to start' });
    return { broker, started, finished, release: release.resolve };
  }

  /** Another replica consuming the same queue; answers the versions it handles. */
  function startReplica(name: string): number[] {
    const handled: number[] = [];
    const broker = makeBroker();
    broker.consume(
      consumer(name, async ({ version }) => {
        handled.push(version);
      }),
    );
    broker.start();
    return handled;
  }

  it('lets a handler running when close() is called finish and acknowledge: never lost, never handled twice', async () => {
    const logs = new LogCapture();
    const first = await startBlockedConsumer('drain', {
      logger: createLogger({ service: 'test', version: '0', level: 'info', destination: logs }),
    });
    let finishedWhenClosed: number[] = [];
    const closed = first.broker.close().then(() => (finishedWhenClosed = [...first.finished]));
    await waitFor(
      () => logs.records().some((record) => record.msg === 'stopped consuming; finishing running handlers'),
      { what: 'consumers cancelled' },
    );
    // Published while the first broker drains: it must not take it any more.
    await first.broker.publish(settingsChanged(2));
    first.release();
    await closed;
    expect(finishedWhenClosed).toEqual([1]);

    const second = startReplica('drain');
    await waitFor(() => second.includes(2), { what: 'the event published during the drain' });
    expect(second).toEqual([2]);
    expect(first.started).toEqual([1]);
    expect((await queueState(topologyNames(namespace).retryQueue('drain'))).messageCount).toBe(0);
  });

  it('gives up on a handler that outlives the shutdown bound: its message is redelivered, not lost', async () => {
    const first = await startBlockedConsumer('slow', { shutdownTimeoutMs: 200 });
    try {
      await first.broker.close();
      const second = startReplica('slow');
      await waitFor(() => second.length === 1, { what: 'redelivery' });
      expect(second).toEqual([1]);
    } finally {
      first.release();
    }
  });

  it('warns, naming the event type and routing key, when a published event reaches no queue', async () => {
    const logs = new LogCapture();
    const broker = makeBroker(amqpUrl(), {
      logger: createLogger({ service: 'test', version: '0', level: 'warn', destination: logs }),
    });
    broker.start();
    await waitFor(() => broker.isReady());
    const event = settingsChanged(1);
    await broker.publish(event);
    const warning = await waitFor(
      () => logs.records().find((record) => record.msg === 'event was not routed to any queue'),
      { what: 'unroutable warning' },
    );
    expect(warning).toMatchObject({
      level: 'warn',
      type: 'settings.general_settings.changed.v1',
      routing_key: 'settings.general_settings.changed.v1',
      event_id: event.id,
    });
  });

  it('sends the frames of one event-loop turn (twenty publishes) in one socket write, every event delivered', async () => {
    const received = new Set<number>();
    const receiving = makeBroker();
    receiving.consume(consumer('turn', async (data) => void received.add(data.version)));
    receiving.start();
    const broker = makeBroker();
    broker.start();
    await waitFor(() => broker.isReady() && receiving.isReady());
    const socket = (broker as unknown as { connection: { connection: { stream: Socket } } }).connection
      .connection.stream;
    let writes = 0;
    const write = socket._write.bind(socket);
    const writev = socket._writev!.bind(socket);
    socket._write = (...args) => ((writes += 1), write(...args));
    socket._writev = (...args) => ((writes += 1), writev(...args));
    await Promise.all(Array.from({ length: 20 }, (_, index) => broker.publish(settingsChanged(index))));
    expect(writes).toBe(1);
    await waitFor(() => received.size === 20, { what: 'twenty deliveries' });
  });
});

function deferred() {
  let resolve!: () => void;
  const promise = new Promise<void>((done) => (resolve = done));
  return { promise, resolve };
}
