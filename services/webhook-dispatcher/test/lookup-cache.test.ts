import { Webhook } from 'standardwebhooks';
import { seededSecret, TcpProxy, waitFor } from '@pack/testkit';
import {
  changeInstance,
  events,
  owner,
  Receiver,
  startDispatcher,
  WEBHOOKS,
  type DispatcherHarness,
} from './harness';

/**
 * Two replicas on one database and broker namespace (decision 0031). A takes the HTTP requests
 * (but one create, made through B) and consumes no events (it stopped consuming; it still
 * publishes), so every event goes to B, whose cached webhook lookups must follow A's writes and
 * its own. The cache lives far longer than any test here, so only the invalidation can make B
 * see a change.
 */
describe('webhook lookup cache across replicas', () => {
  const amqpUrl = process.env.AMQP_URL!;
  const cacheMs = { WEBHOOK_LOOKUP_CACHE_MS: '300000' };
  let proxy: TcpProxy;
  let a: DispatcherHarness;
  let b: DispatcherHarness;
  let receiver: Receiver;
  let nextService = 9100;
  let nextInstance = 1;

  beforeAll(async () => {
    proxy = await TcpProxy.forUrl(amqpUrl).start();
    b = await startDispatcher({ env: { ...cacheMs, AMQP_URL: proxy.rewrite(amqpUrl) } });
    a = await b.replica({ env: { AMQP_URL: amqpUrl } });
    await a.service.context.broker.stopConsuming();
  });
  afterAll(async () => {
    proxy.restore();
    await a?.stop();
    await b?.stop();
    await proxy.stop();
  });
  beforeEach(async () => {
    receiver = await new Receiver().start();
  });
  afterEach(() => receiver.stop());

  /** Events B has handled and acknowledged (their fires are written by then). */
  const handledByB = async () => {
    const text = await (await fetch(`${b.service.url}/metrics`)).text();
    const line =
      /^broker_consumed_total\{queue="[^"]*webhook-dispatcher\.change-instances",outcome="ack"[^}]*\} (\d+)/m;
    return Number(line.exec(text)?.[1] ?? 0);
  };
  /** Publishes a Change Instance event for `service` and waits until B acknowledged it. */
  const handled = async (service: number, state: 'PENDING' | 'APPROVED' = 'PENDING') => {
    const before = await handledByB();
    const instance = nextInstance++;
    if (state === 'PENDING')
      await b.publish(events.changeInstanceCreated, {
        ...changeInstance(service, instance, 'PENDING'),
        auto_approved: false,
      });
    else
      await b.publish(events.changeInstanceStateChanged, {
        ...changeInstance(service, instance, state),
        old_state: 'PENDING',
        reasons: [],
        changed_by: { kind: 'user', user_id: owner.id, username: owner.username },
      });
    await waitFor(async () => (await handledByB()) > before, { what: 'B to handle the event' });
  };
  const firesOf = (webhook: number) =>
    b.collection('webhook_responses').countDocuments({ webhook_id: webhook });
  const create = async (service: number, change: Record<string, unknown> = {}) => {
    const created = await a.as(owner, 'POST', WEBHOOKS, {
      name: `hook ${service}`,
      description: '',
      service,
      target_url: receiver.url,
      authorization: 'Bearer x',
      ...change,
    });
    expect(created.status).toBe(201);
    return created.body as { id: number; secret: string };
  };
  /** A Service with a webhook that B has fired once (so B holds its list). */
  const cachedWebhook = async (change: Record<string, unknown> = {}) => {
    const service = ++nextService;
    await b.addService(service, owner);
    const webhook = await create(service, change);
    await handled(service);
    await receiver.received(1);
    return { service, webhook };
  };
  const patch = async (id: number, body: Record<string, unknown>) =>
    expect((await a.as(owner, 'PATCH', `${WEBHOOKS}${id}/`, body)).status).toBe(200);

  it('fires a webhook created through A for the next event B consumes, although B had cached the Service without it', async () => {
    const service = ++nextService;
    await b.addService(service, owner);
    await handled(service); // B caches "no webhooks"
    const webhook = await create(service);
    await handled(service);
    expect(await firesOf(webhook.id)).toBe(1);
    expect((await receiver.received(1))[0]!.headers['webhook-id']).toMatch(new RegExp(`^msg_${webhook.id}_`));
  });

  it('fires a webhook created through B for the next event B consumes, although B had cached the Service without it', async () => {
    const service = ++nextService;
    await b.addService(service, owner);
    await handled(service); // B caches "no webhooks"
    const created = await b.as(owner, 'POST', WEBHOOKS, {
      name: `hook ${service}`,
      service,
      target_url: receiver.url,
    });
    expect(created.status).toBe(201);
    const webhook = created.body as { id: number };
    await handled(service);
    expect(await firesOf(webhook.id)).toBe(1);
    expect((await receiver.received(1))[0]!.headers['webhook-id']).toMatch(new RegExp(`^msg_${webhook.id}_`));
  });

  it('sends to the new target URL after an update through A', async () => {
    const { service, webhook } = await cachedWebhook();
    const moved = await new Receiver().start();
    try {
      const movedAuthorization = `Bearer moved-token-${seededSecret('the moved authorization', { suffix: '0003' })}`;
      await patch(webhook.id, { target_url: moved.url, authorization: movedAuthorization });
      await handled(service);
      const [request] = await moved.received(1);
      expect(request!.headers.authorization).toBe(movedAuthorization);
      expect(receiver.requests).toHaveLength(1);
    } finally {
      await moved.stop();
    }
  });

  it('follows a change of change_instance_state made through A', async () => {
    const { service, webhook } = await cachedWebhook();
    await patch(webhook.id, { change_instance_state: 'APPROVED' });
    await handled(service, 'PENDING'); // no longer fires at submission
    await handled(service, 'APPROVED');
    const requests = await receiver.received(2);
    expect(requests.map((request) => request.json.state)).toEqual(['PENDING', 'APPROVED']);
    expect(await firesOf(webhook.id)).toBe(2);
  });

  it('signs with the secret rotated through A', async () => {
    const { service, webhook } = await cachedWebhook();
    const rotated = await a.as(owner, 'POST', `${WEBHOOKS}${webhook.id}/rotate_secret/`);
    expect(rotated.status).toBe(200);
    await handled(service);
    const request = (await receiver.received(2))[1]!;
    const headers = {
      'webhook-id': String(request.headers['webhook-id']),
      'webhook-timestamp': String(request.headers['webhook-timestamp']),
      'webhook-signature': String(request.headers['webhook-signature']),
    };
    expect(new Webhook((rotated.body as { secret: string }).secret).verify(request.body, headers)).toEqual(
      request.json,
    );
  });

  it('fires nothing for a webhook disabled through A', async () => {
    const { service, webhook } = await cachedWebhook();
    await patch(webhook.id, { enabled: false });
    await handled(service);
    expect(await firesOf(webhook.id)).toBe(1);
  });

  it('fires nothing for a webhook that A disabled on a 410 answer', async () => {
    const { service, webhook } = await cachedWebhook();
    receiver.next({ status: 410 });
    expect((await a.as(owner, 'POST', `${WEBHOOKS}${webhook.id}/trigger/`, {})).status).toBe(202);
    // The fire is recorded FAILED after the disable was written and announced.
    await waitFor(
      async () =>
        (await b
          .collection('webhook_responses')
          .countDocuments({ webhook_id: webhook.id, state: 'FAILED' })) === 1,
      { what: 'the manual fire answered 410' },
    );
    await handled(service);
    expect(await firesOf(webhook.id)).toBe(2);
  });

  it('fires nothing for a webhook deleted through A', async () => {
    const { service, webhook } = await cachedWebhook();
    expect((await a.as(owner, 'DELETE', `${WEBHOOKS}${webhook.id}/`)).status).toBe(204);
    await handled(service);
    expect(await firesOf(webhook.id)).toBe(0);
  });

  it('forgets everything B cached when B reconnects to the broker (announcements meanwhile are lost)', async () => {
    const service = ++nextService;
    await b.addService(service, owner);
    await handled(service); // B caches "no webhooks"
    proxy.cut();
    await waitFor(() => !b.service.context.broker.isReady(), { what: 'B to lose the broker' });
    const webhook = await create(service); // announced while B has no queue to hear it
    proxy.restore();
    await waitFor(() => b.service.context.broker.isReady(), { what: 'B back' });
    await handled(service);
    expect(await firesOf(webhook.id)).toBe(1);
    await receiver.received(1);
  });
});
