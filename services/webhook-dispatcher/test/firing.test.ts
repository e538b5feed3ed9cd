import { Webhook } from 'standardwebhooks';
import { metricsAddedSince, metricSample as sample, metricsText, waitFor } from '@pack/testkit';
import {
  changeInstance,
  events,
  owner,
  Receiver,
  RECEIVER_AUTHORIZATION,
  startDispatcher,
  WEBHOOKS,
  webhookOnNewService,
  type DispatcherHarness,
} from './harness';

describe('firing and delivery (spec 4.1, 6; Standard Webhooks)', () => {
  let dispatcher: DispatcherHarness;
  let receiver: Receiver;

  beforeAll(async () => {
    dispatcher = await startDispatcher({ env: { WEBHOOK_MAX_ATTEMPTS: '3' } });
  });
  afterAll(() => dispatcher.stop());
  beforeEach(async () => {
    receiver = await new Receiver().start();
  });
  afterEach(() => receiver.stop());

  const webhookOn = (change: Record<string, unknown> = {}) =>
    webhookOnNewService(dispatcher, receiver.url, change);

  const responsesOf = async (id: number) =>
    (await dispatcher.as(owner, 'GET', `${WEBHOOKS}${id}/responses/`)).body;
  const settled = (id: number, count = 1) =>
    waitFor(
      async () => {
        const page = await responsesOf(id);
        const done = page.results.filter((r: { state: string }) => r.state === 'OK' || r.state === 'FAILED');
        return done.length >= count ? page.results : undefined;
      },
      { what: `${count} settled responses of webhook ${id}` },
    );

  it('fires at submission with exactly the body of 4.1, the stored Authorization and verifiable signatures', async () => {
    const { service, webhook } = await webhookOn();
    await dispatcher.publish(events.changeInstanceCreated, {
      ...changeInstance(service, 501, 'PENDING'),
      auto_approved: false,
    });
    const [request] = await receiver.received(1);
    expect(request!.json).toEqual({
      id: service,
      name: `Service ${service}`,
      owner: { id: owner.id, name: owner.username },
      state: 'PENDING',
    });
    expect(request!.headers['content-type']).toBe('application/json');
    expect(request!.headers.authorization).toBe(RECEIVER_AUTHORIZATION);
    const verified = new Webhook(webhook.secret).verify(request!.body, {
      'webhook-id': String(request!.headers['webhook-id']),
      'webhook-timestamp': String(request!.headers['webhook-timestamp']),
      'webhook-signature': String(request!.headers['webhook-signature']),
    });
    expect(verified).toEqual(request!.json);
    expect(() =>
      new Webhook(`whsec_${Buffer.from('another secret of 24 b!!').toString('base64')}`).verify(
        request!.body,
        {
          'webhook-id': String(request!.headers['webhook-id']),
          'webhook-timestamp': String(request!.headers['webhook-timestamp']),
          'webhook-signature': String(request!.headers['webhook-signature']),
        },
      ),
    ).toThrow();

    const [response] = await settled(webhook.id);
    expect(response).toMatchObject({
      id: 1,
      state: 'OK',
      mode: 'submission',
      change_instance_id: 501,
      status_code: 200,
      response_body: 'ok',
      message_id: request!.headers['webhook-id'],
    });
    expect(response.attempts).toHaveLength(1);
  });

  it('fires on a move into the configured state only', async () => {
    const { service, webhook } = await webhookOn({ change_instance_state: 'APPROVED' });
    await dispatcher.publish(events.changeInstanceCreated, {
      ...changeInstance(service, 601, 'PENDING'),
      auto_approved: false,
    });
    const move = (from: 'PENDING' | 'APPROVED', to: 'APPROVED' | 'IN_PROGRESS') =>
      dispatcher.publish(events.changeInstanceStateChanged, {
        ...changeInstance(service, 601, to),
        old_state: from,
        reasons: [],
        changed_by: { kind: 'user', user_id: owner.id, username: owner.username },
      });
    await move('PENDING', 'APPROVED');
    await move('APPROVED', 'IN_PROGRESS');
    await settled(webhook.id);
    const responses = await responsesOf(webhook.id);
    expect(responses.results.map((r: any) => [r.mode, r.request_body.state])).toEqual([
      ['state_change', 'APPROVED'],
    ]);
    expect(receiver.requests.map((r) => r.json.state)).toEqual(['APPROVED']);
  });

  it('fires manually, and a redelivered event fires nothing more', async () => {
    const { service, webhook } = await webhookOn();
    const manual = await dispatcher.as(owner, 'POST', `${WEBHOOKS}${webhook.id}/trigger/`, {});
    expect(manual.status).toBe(202);
    expect(manual.body).toEqual({ outcome: 'scheduled', response_id: 1 });
    expect((await receiver.received(1))[0]!.json.state).toBe('MANUAL');
    const created = { ...changeInstance(service, 701, 'PENDING'), auto_approved: false };
    const id = await dispatcher.publish(events.changeInstanceCreated, created);
    await settled(webhook.id, 2);
    // The same event again (at-least-once delivery), then a new one: only the new one fires.
    await dispatcher.publish(events.changeInstanceCreated, created, id);
    await dispatcher.publish(events.changeInstanceCreated, { ...created, change_instance_id: 702 });
    await settled(webhook.id, 3);
    expect(receiver.requests).toHaveLength(3);
    const responses = (await responsesOf(webhook.id)).results;
    // Newest first. A redelivery may use up a number (a gap), never a second fire.
    expect(responses.map((r: any) => [r.mode, r.change_instance_id])).toEqual([
      ['submission', 702],
      ['submission', 701],
      ['manual', null],
    ]);
    const ids = responses.map((r: any) => r.id as number);
    expect([...ids].sort((a, b) => b - a)).toEqual(ids);
  });

  it('retries 503 and 429 with the same webhook-id, then records OK', async () => {
    const { webhook } = await webhookOn();
    receiver.next({ status: 503 }, { status: 429, headers: { 'retry-after': '0' } });
    await dispatcher.as(owner, 'POST', `${WEBHOOKS}${webhook.id}/trigger/`, {});
    const [response] = await settled(webhook.id);
    expect(response.state).toBe('OK');
    expect(response.attempts.map((a: any) => a.status_code)).toEqual([503, 429, 200]);
    expect(new Set(receiver.requests.map((r) => r.headers['webhook-id'])).size).toBe(1);
  });

  it('gives up after the attempts run out: FAILED with every attempt recorded', async () => {
    const { webhook } = await webhookOn();
    receiver.fallback = { status: 500, body: 'down' };
    await dispatcher.as(owner, 'POST', `${WEBHOOKS}${webhook.id}/trigger/`, {});
    const [response] = await settled(webhook.id);
    expect(response).toMatchObject({ state: 'FAILED', status_code: 500, response_body: 'down' });
    expect(response.attempts).toHaveLength(3);
    expect(receiver.requests).toHaveLength(3);
  });

  it('fails a redirect without following it', async () => {
    const { webhook } = await webhookOn();
    receiver.next({ status: 302, headers: { location: `${receiver.url}/elsewhere` } });
    await dispatcher.as(owner, 'POST', `${WEBHOOKS}${webhook.id}/trigger/`, {});
    const [response] = await settled(webhook.id);
    expect(response).toMatchObject({ state: 'FAILED', status_code: 302 });
    expect(receiver.requests).toHaveLength(1);
  });

  it('disables the webhook on 410 Gone', async () => {
    const { service, webhook } = await webhookOn();
    receiver.next({ status: 410 });
    await dispatcher.as(owner, 'POST', `${WEBHOOKS}${webhook.id}/trigger/`, {});
    const [response] = await settled(webhook.id);
    expect(response).toMatchObject({ state: 'FAILED', status_code: 410 });
    const read = (await dispatcher.as(owner, 'GET', `${WEBHOOKS}${webhook.id}/`)).body;
    expect(read).toMatchObject({ enabled: false, disabled_reason: expect.stringContaining('410') });
    await dispatcher.publish(events.changeInstanceCreated, {
      ...changeInstance(service, 801, 'PENDING'),
      auto_approved: false,
    });
    const refused = await dispatcher.as(owner, 'POST', `${WEBHOOKS}${webhook.id}/trigger/`, {});
    expect(refused.status).toBe(409);
    expect(Object.keys((refused.body as { errors: object }).errors)).toEqual(['enabled']);
    expect(await settled(webhook.id)).toHaveLength(1);
    expect(receiver.requests).toHaveLength(1);
  });

  it('keeps a long answer cut to 4096 characters', async () => {
    const { webhook } = await webhookOn();
    receiver.next({ status: 200, body: 'x'.repeat(10_000) });
    await dispatcher.as(owner, 'POST', `${WEBHOOKS}${webhook.id}/trigger/`, {});
    const [response] = await settled(webhook.id);
    expect(response.response_body).toHaveLength(4096);
    expect(response.response_truncated).toBe(true);
  });

  it('counts fires, attempts and deliveries in the metrics', async () => {
    const { webhook } = await webhookOn();
    const before = await metricsText(dispatcher.service.url);
    receiver.next({ status: 503 });
    await dispatcher.as(owner, 'POST', `${WEBHOOKS}${webhook.id}/trigger/`, {});
    const [response] = await settled(webhook.id);
    expect(response.attempts.map((a: any) => a.status_code)).toEqual([503, 200]);
    // What this one fire added: one manual fire, two requests, one retry then one OK delivery.
    const expected = { fires: 1, attempts: 2, retries: 1, delivered: 1, timed: 1 };
    const reading = await metricsAddedSince(
      dispatcher.service.url,
      before,
      (added) => ({
        fires: added('webhook_fires_total', { mode: 'manual' }),
        attempts: added('webhook_attempts_total'),
        retries: added('webhook_deliveries_total', { outcome: 'retry' }),
        delivered: added('webhook_deliveries_total', { outcome: 'ok' }),
        timed: added('webhook_delivery_latency_seconds_count'),
      }),
      expected,
    );
    expect(reading).toEqual(expected);
    const after = await metricsText(dispatcher.service.url);
    expect(sample(after, 'webhook_breaker_state', { webhook_id: String(webhook.id) })).toBe(0);
    expect(after).toContain(`webhook_id="${webhook.id}"`);
  });
});
