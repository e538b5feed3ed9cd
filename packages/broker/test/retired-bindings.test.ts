import amqp from 'amqplib';
import { createEnvelope, events } from '@pack/contracts';
import { createLogger } from '@pack/logging';
import { createMetrics } from '@pack/metrics';
import { deleteQueues, uniqueName, waitFor } from '@pack/testkit';
import { Broker, on, topologyNames, type ConsumerSpec } from '../src';

const amqpUrl = () => process.env.AMQP_URL!;
const silent = createLogger({ service: 'test', version: '0', level: 'silent' });

const settingsChanged = (version: number) =>
  createEnvelope(
    events.settingsChanged,
    { groups: ['currency'], version, changed_by: 1 },
    { source: 'test', correlationId: `v${version}` },
  );
const decided = (id: number) =>
  createEnvelope(
    events.changeInstanceValidationDecided,
    { change_instance_id: id, decision: 'approve', reasons: [] },
    { source: 'test', correlationId: `d${id}` },
  );

/**
 * A new version of a consumer that no longer wants an event type its queue was bound to
 * (docs/decisions/0036): the durable queue keeps the old binding unless the new version removes it.
 */
describe('a retired binding of a durable queue', () => {
  const brokers: Broker[] = [];
  let namespace: string;
  const name = 'evolving';

  const makeBroker = (spec?: ConsumerSpec) => {
    const broker = new Broker({
      url: amqpUrl(),
      namespace,
      service: 'test',
      logger: silent,
      metrics: createMetrics('test'),
      deliveryLimit: 5,
    });
    if (spec) broker.consume(spec);
    brokers.push(broker);
    broker.start();
    return broker;
  };
  const ready = (broker: Broker) => waitFor(() => broker.isReady(), { what: 'broker ready' });

  beforeEach(() => {
    namespace = uniqueName('t');
  });
  afterEach(async () => {
    for (const broker of brokers.splice(0)) await broker.close();
    const names = topologyNames(namespace);
    await deleteQueues(amqpUrl(), [names.queue(name), names.retryQueue(name), names.deadLetterQueue(name)]);
  });

  it('is unbound at start, and what the queue still holds of that type is handled, not dead-lettered', async () => {
    // The earlier version: bound to settings changes.
    const earlier = makeBroker({ name, handlers: [on(events.settingsChanged, async () => undefined)] });
    await ready(earlier);
    await earlier.close();
    // A settings change published while no replica consumes: the queue holds it.
    const publisher = makeBroker();
    await ready(publisher);
    await publisher.publish(settingsChanged(1));

    const retired: number[] = [];
    const current: number[] = [];
    const later = makeBroker({
      name,
      handlers: [
        on(events.changeInstanceValidationDecided, async (data) => {
          current.push(data.change_instance_id);
        }),
      ],
      retired: [
        on(events.settingsChanged, async (data) => {
          retired.push(data.version);
        }),
      ],
    });
    await ready(later);
    await waitFor(() => retired.length === 1, { what: 'the held settings change' });

    // After the start, a settings change reaches the queue no more; its own type still does.
    await publisher.publish(settingsChanged(2));
    await publisher.publish(decided(7));
    await waitFor(() => current.length === 1, { what: 'the validation decision' });
    expect(retired).toEqual([1]);
    expect(current).toEqual([7]);
    const connection = await amqp.connect(amqpUrl());
    try {
      const channel = await connection.createChannel();
      const deadLetters = await channel.checkQueue(topologyNames(namespace).deadLetterQueue(name));
      expect(deadLetters.messageCount).toBe(0);
    } finally {
      await connection.close();
    }
  });
});
