import { TcpProxy, waitFor } from '@pack/testkit';
import {
  changeInstance,
  events,
  owner,
  Receiver,
  startDispatcher,
  WEBHOOKS,
  type DispatcherHarness,
} from './harness';

const RESPONSES = '/v1/external/serviceowner/webhook_responses/';

interface View {
  state: string;
  mode: string;
  change_instance_id: number | null;
  message_id: string;
  status_code: number | null;
  attempts: unknown[];
}

/**
 * RabbitMQ goes away for the dispatcher alone (a TCP proxy between them is cut, the shared
 * broker keeps running) while it is working through a burst of events, and comes back.
 */
describe('no lost fire when RabbitMQ goes away mid-flight', () => {
  const amqpUrl = process.env.AMQP_URL!;
  let proxy: TcpProxy;
  let dispatcher: DispatcherHarness;
  let receiver: Receiver;

  beforeAll(async () => {
    proxy = await TcpProxy.forUrl(amqpUrl).start();
    dispatcher = await startDispatcher({ env: { AMQP_URL: proxy.rewrite(amqpUrl) } });
    await dispatcher.changeSettings((s) => {
      s.external_api.webhook_rate_limit_per_minute = 100_000;
      s.external_api.webhook_response_rate_limit = 100_000;
      s.external_api.webhook_response_retention = 1000;
    });
    receiver = await new Receiver().start();
  });
  afterAll(async () => {
    proxy.restore();
    await receiver.stop();
    await dispatcher.stop();
    await proxy.stop();
  });

  it('delivers every fire exactly once, with its Webhook Response, when the connection is cut and restored', async () => {
    const service = 8000;
    await dispatcher.addService(service, owner);
    const created = await dispatcher.as(owner, 'POST', WEBHOOKS, {
      name: 'through the outage',
      description: '',
      service,
      target_url: receiver.url,
      authorization: 'Bearer x',
    });
    expect(created.status).toBe(201);
    const webhook = (created.body as { id: number }).id;
    // Published by the test to the broker itself (as the catalog would), not through the proxy.
    const submit = (id: number) =>
      dispatcher.publish(events.changeInstanceCreated, {
        ...changeInstance(service, id, 'PENDING'),
        auto_approved: false,
      });

    // Published at once, so the dispatcher holds a backlog (prefetched, unacknowledged) at the cut.
    const before = 60;
    for (let from = 1; from <= before; from += 20)
      await Promise.all(Array.from({ length: 20 }, (_, i) => submit(from + i)));
    await waitFor(() => receiver.requests.length >= 5, { what: 'the burst under way' });
    proxy.cut();
    const deliveredAtCut = receiver.requests.length;
    await waitFor(() => !dispatcher.service.context.broker.isReady(), {
      what: 'the dispatcher to lose the broker',
    });

    // Meanwhile: more events wait in the queue; a manual trigger (HTTP, no broker) still fires.
    const during = 20;
    for (let id = before + 1; id <= before + during; id += 1) await submit(id);
    const manual = await dispatcher.as(owner, 'POST', `${WEBHOOKS}${webhook}/trigger/`, {});
    expect(manual.status).toBe(202);
    // Down until the dispatcher has tried to reconnect a few times (backoff: a few seconds).
    await waitFor(() => proxy.refused >= 4, { what: 'refused reconnects' });
    expect(dispatcher.service.context.broker.isReady()).toBe(false);
    proxy.restore();

    const total = before + during + 1;
    const responses = await waitFor(
      async () => {
        const page = await dispatcher.as(owner, 'GET', `${RESPONSES}?webhook=${webhook}&limit=500`);
        const results = (page.body as { results: View[] }).results;
        return results.length >= total && results.every((r) => r.state === 'OK') ? results : undefined;
      },
      { what: `${total} fires delivered` },
    );
    expect(deliveredAtCut).toBeLessThan(before);
    // Fires are delivered from the database, so the last ones can be in before the connection is.
    await waitFor(() => dispatcher.service.context.broker.isReady(), { what: 'the broker connection back' });

    // One response per event and the manual fire, each sent once and answered 200.
    expect(responses).toHaveLength(total);
    const submitted = responses.filter((r) => r.mode === 'submission').map((r) => r.change_instance_id);
    expect([...submitted].sort((a, b) => a! - b!)).toEqual(
      Array.from({ length: before + during }, (_, i) => i + 1),
    );
    expect(responses.filter((r) => r.mode === 'manual')).toHaveLength(1);
    for (const response of responses) {
      expect(response.status_code).toBe(200);
      expect(response.attempts).toHaveLength(1);
    }
    const sent = receiver.requests.map((request) => String(request.headers['webhook-id']));
    expect(sent).toHaveLength(total);
    expect(new Set(sent)).toEqual(new Set(responses.map((r) => r.message_id)));
  });
});
