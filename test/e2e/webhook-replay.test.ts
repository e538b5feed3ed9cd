import { Webhook } from 'standardwebhooks';
import { metricSample, metricsText, Receiver, waitFor } from '@pack/testkit';
import { startStack, type Stack } from '../stack';

const HOOKS = '/v1/external/serviceowner/webhooks/';
/** The rate window the dispatcher counts webhook_rate_limit_per_minute in (shortened here). */
const RATE_WINDOW_MS = 1000;

/**
 * Resend and recovery through the gateway: a target down for the whole retry window (two attempts, both
 * 503) leaves FAILED responses; once it is up again the owner resends one, or recovers every
 * FAILED fire since a time.
 */
describe('webhook resend and recovery through the gateway', () => {
  let stack: Stack;
  let receiver: Receiver;
  let owner: string;
  let stranger: string;
  let consumer: string;

  beforeAll(async () => {
    receiver = await new Receiver().start();
    stack = await startStack({
      env: {
        'webhook-dispatcher': {
          WEBHOOK_MAX_ATTEMPTS: '2',
          WEBHOOK_RETRY_BASE_MS: '50',
          WEBHOOK_RETRY_MAX_MS: '100',
          WEBHOOK_RATE_WINDOW_MS: String(RATE_WINDOW_MS),
          WEBHOOK_RECOVERY_POLL_MS: '200',
          // The failed attempts would open the target's breaker, which holds fires back and sends
          // them together after: the rate windows of the resends are checked here, not the breaker.
          WEBHOOK_BREAKER_VOLUME: '1000',
        },
      },
    });
    [owner, stranger, consumer] = await Promise.all([
      stack.issueToken('service_owner'),
      stack.issueToken('service_owner'),
      stack.issueToken('consumer'),
    ]);
  });
  afterAll(async () => {
    await stack?.stop();
    await receiver?.stop();
  });

  /** A Service of the owner with a webhook at the receiver (the dispatcher learns the Service by event). */
  async function webhook(name: string) {
    const service = await stack.call('POST', '/v1/catalog/services/', { token: owner, body: { name } });
    expect(service.status).toBe(201);
    const hook = await waitFor(async () => {
      const reply = await stack.call('POST', HOOKS, {
        token: owner,
        body: { name, service: service.body.id, target_url: receiver.url },
      });
      return reply.status === 201 ? reply.body : undefined;
    });
    return { service: service.body.id as number, hook: hook as { id: number; secret: string } };
  }

  /** Sets webhook_rate_limit_per_minute and waits until the dispatcher applies it. */
  async function rateLimit(limit: number) {
    const applied = async () =>
      metricSample(
        await metricsText(stack.service('webhook-dispatcher').metricsUrl),
        'settings_applied_total',
      );
    const before = await applied();
    const patched = await stack.call('PATCH', '/v1/core/general_settings/', {
      body: { external_api: { webhook_rate_limit_per_minute: limit } },
    });
    expect(patched.status).toBe(200);
    await waitFor(async () => (await applied()) > before, { what: 'the dispatcher applied the settings' });
  }

  /** `count` manual fires while the target is down: each FAILED after both its attempts. */
  async function failedFires(hookId: number, count: number) {
    receiver.fallback = { status: 503, body: 'down for maintenance' };
    for (let n = 0; n < count; n += 1) {
      const fired = await stack.call('POST', `${HOOKS}${hookId}/trigger/`, { token: owner, body: {} });
      expect(fired.status).toBe(202);
    }
    const failed = await waitFor(
      async () => {
        const reply = await stack.call('GET', `${HOOKS}${hookId}/responses/?state=FAILED`, { token: owner });
        return reply.body.count === count ? reply.body.results : undefined;
      },
      { what: `${count} FAILED fires` },
    );
    receiver.fallback = { status: 200, body: 'ok' };
    return failed as { id: number; message_id: string; attempts: unknown[] }[];
  }

  it('resends one response: the same body byte for byte and webhook-id, signed with the current secret; history shows the resend', async () => {
    const { hook } = await webhook('Resent service');
    const [failed] = await failedFires(hook.id, 1);
    expect(failed!.attempts).toHaveLength(2);
    const firstAttempts = receiver.requests.filter((r) => r.headers['webhook-id'] === failed!.message_id);
    expect(firstAttempts).toHaveLength(2);
    const rotated = await stack.call('POST', `${HOOKS}${hook.id}/rotate_secret/`, { token: owner });
    expect(rotated.status).toBe(200);
    const before = receiver.requests.length;
    const metrics = await metricsText(stack.service('webhook-dispatcher').metricsUrl);
    // webhook-timestamp is in whole seconds: a fresh one shows once the last attempt's second is over.
    const lastSecond = Number(firstAttempts[1]!.headers['webhook-timestamp']);
    await waitFor(() => Date.now() >= (lastSecond + 1) * 1000, { what: 'the next whole second' });

    const resent = await stack.call('POST', `${HOOKS}${hook.id}/responses/${failed!.id}/resend/`, {
      token: owner,
    });
    expect(resent.status).toBe(202);
    expect(resent.body).toEqual({ outcome: 'scheduled', response_id: expect.any(Number) });
    const [request] = (await receiver.received(before + 1)).slice(before);
    expect(request!.body).toBe(firstAttempts[0]!.body);
    expect(request!.headers['webhook-id']).toBe(failed!.message_id);
    expect(Number(request!.headers['webhook-timestamp'])).toBeGreaterThan(
      Number(firstAttempts[1]!.headers['webhook-timestamp']),
    );
    const headers = {
      'webhook-id': String(request!.headers['webhook-id']),
      'webhook-timestamp': String(request!.headers['webhook-timestamp']),
      'webhook-signature': String(request!.headers['webhook-signature']),
    };
    expect(new Webhook(rotated.body.secret).verify(request!.body, headers)).toEqual(
      JSON.parse(request!.body),
    );
    expect(() => new Webhook(hook.secret).verify(request!.body, headers)).toThrow();

    const view = await waitFor(async () => {
      const reply = await stack.call('GET', `${HOOKS}${hook.id}/responses/${resent.body.response_id}/`, {
        token: owner,
      });
      return reply.body.state === 'OK' ? reply.body : undefined;
    });
    expect(view).toMatchObject({
      resend_of: { id: failed!.id, message_id: failed!.message_id, recovery_id: null },
      status_code: 200,
      attempts: [{ status_code: 200, error: null }],
    });
    const resends = await stack.call('GET', `${HOOKS}${hook.id}/responses/?resend=true`, { token: owner });
    expect(resends.body.results.map((r: { id: number }) => r.id)).toEqual([resent.body.response_id]);
    const firsts = await stack.call('GET', `${HOOKS}${hook.id}/responses/?resend=false&state=FAILED`, {
      token: owner,
    });
    expect(firsts.body.results.map((r: { id: number }) => r.id)).toEqual([failed!.id]);
    const across = await stack.call('GET', `/v1/external/serviceowner/webhook_responses/?resend=true`, {
      token: owner,
    });
    expect(across.body.results.map((r: { id: number }) => r.id)).toEqual([resent.body.response_id]);
    const after = await metricsText(stack.service('webhook-dispatcher').metricsUrl);
    const added = (text: string) => metricSample(text, 'pack_webhook_resends_total', { reason: 'manual' });
    expect(added(after) - added(metrics)).toBe(1);
  });

  it('refuses what it cannot resend: 409 naming why (disabled, Service deleted), 404 to others, 400 on a bad id', async () => {
    const { service, hook } = await webhook('Refusing service');
    const [failed] = await failedFires(hook.id, 1);
    const resend = (token: string, id: number | string = failed!.id) =>
      stack.call('POST', `${HOOKS}${hook.id}/responses/${id}/resend/`, { token });
    expect((await resend(stranger)).status).toBe(404);
    expect((await resend(consumer)).status).toBe(403);
    expect((await resend(owner, 999)).status).toBe(404);
    const bad = await resend(owner, 'first');
    expect(bad.status).toBe(400);
    expect(Object.keys(bad.body.errors)).toEqual(['path.response_id']);
    const recoverBad = await stack.call('POST', `${HOOKS}${hook.id}/recover/`, {
      token: owner,
      body: { since: '2026-01-02T00:00:00Z', until: '2026-01-01T00:00:00Z' },
    });
    expect(recoverBad.status).toBe(400);
    expect(Object.keys(recoverBad.body.errors)).toEqual(['until']);

    expect(
      (await stack.call('PATCH', `${HOOKS}${hook.id}/`, { token: owner, body: { enabled: false } })).status,
    ).toBe(200);
    const disabled = await resend(owner);
    expect(disabled.status).toBe(409);
    expect(disabled.body.detail).toMatch(/the webhook is disabled/);
    expect(
      (await stack.call('PATCH', `${HOOKS}${hook.id}/`, { token: owner, body: { enabled: true } })).status,
    ).toBe(200);
    expect((await stack.call('DELETE', `/v1/catalog/services/${service}/`, { token: owner })).status).toBe(
      204,
    );
    await waitFor(async () => {
      const reply = await stack.call('GET', `${HOOKS}${hook.id}/`, { token: owner });
      return reply.body.enabled === false || undefined;
    });
    const deleted = await resend(owner);
    expect(deleted.status).toBe(409);
    expect(deleted.body.detail).toMatch(/its Service was deleted/);
    const recover = await stack.call('POST', `${HOOKS}${hook.id}/recover/`, {
      token: owner,
      body: { since: '2026-01-01T00:00:00Z' },
    });
    expect(recover.status).toBe(409);
    const listed = await stack.call('GET', `${HOOKS}${hook.id}/responses/?resend=true`, { token: owner });
    expect(listed.body.count).toBe(0);
  });

  it('recovers every FAILED fire since a time, oldest first, within the rate limit; idempotent for the same window, one at a time', async () => {
    const { hook } = await webhook('Recovered service');
    const since = new Date(Date.now() - 1000).toISOString();
    const failed = (await failedFires(hook.id, 5)).reverse(); // oldest first
    const limit = 2;
    await rateLimit(limit);
    const before = receiver.requests.length;
    const metrics = await metricsText(stack.service('webhook-dispatcher').metricsUrl);
    try {
      const started = await stack.call('POST', `${HOOKS}${hook.id}/recover/`, {
        token: owner,
        body: { since },
      });
      expect(started.status).toBe(202);
      expect(started.body).toMatchObject({ webhook: hook.id, total: 5, since, finished_at: null });
      const again = await stack.call('POST', `${HOOKS}${hook.id}/recover/`, {
        token: owner,
        body: { since },
      });
      expect(again.status).toBe(202);
      expect(again.body.id).toBe(started.body.id);
      const other = await stack.call('POST', `${HOOKS}${hook.id}/recover/`, {
        token: owner,
        body: { since: new Date(Date.now() - 60_000).toISOString() },
      });
      expect(other.status).toBe(409);
      expect(other.body.detail).toContain(started.body.id);
      expect(
        (await stack.call('GET', `${HOOKS}${hook.id}/recoveries/${started.body.id}/`, { token: stranger }))
          .status,
      ).toBe(404);

      const done = await waitFor(
        async () => {
          const reply = await stack.call('GET', `${HOOKS}${hook.id}/recoveries/${started.body.id}/`, {
            token: owner,
          });
          return reply.body.state === 'DONE' ? reply.body : undefined;
        },
        { what: 'the recovery DONE' },
      );
      expect(done).toMatchObject({ total: 5, resent: 5, reason: null });
      const requests = (await receiver.received(before + 5)).slice(before);
      expect(requests.map((r) => r.headers['webhook-id']).sort()).toEqual(
        failed.map((f) => f.message_id).sort(),
      );
      const resends = await waitFor(async () => {
        const reply = await stack.call('GET', `${HOOKS}${hook.id}/responses/?resend=true&state=OK`, {
          token: owner,
        });
        return reply.body.count === 5 ? reply.body.results.reverse() : undefined;
      });
      // Oldest first: the resends are numbered in the order of the fires they resend.
      expect(resends.map((r: { resend_of: { id: number } }) => r.resend_of.id)).toEqual(
        failed.map((f) => f.id),
      );
      for (const r of resends) expect(r.resend_of.recovery_id).toBe(started.body.id);
      // "at most as fast as the rate limit allows": no rate window holds more than `limit` resends.
      const perWindow = new Map<number, number>();
      for (const r of resends) {
        const window = Math.floor(Date.parse(r.scheduled_for) / RATE_WINDOW_MS);
        perWindow.set(window, (perWindow.get(window) ?? 0) + 1);
      }
      expect(Math.max(...perWindow.values())).toBeLessThanOrEqual(limit);
      const after = await metricsText(stack.service('webhook-dispatcher').metricsUrl);
      const added = (text: string) =>
        metricSample(text, 'pack_webhook_resends_total', { reason: 'recovery' });
      expect(added(after) - added(metrics)).toBe(5);

      // Finished: a new window may start; nothing is left in it to resend.
      const next = await stack.call('POST', `${HOOKS}${hook.id}/recover/`, {
        token: owner,
        body: { since: new Date().toISOString() },
      });
      expect(next.status).toBe(202);
      expect(next.body.id).not.toBe(started.body.id);
      expect(next.body.total).toBe(0);
    } finally {
      await rateLimit(60);
    }
  });
});
