import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';
import { loadConfig } from '@pack/config';
import { WEBHOOK_TARGET_RULE } from '@pack/contracts';
import { startService } from '@pack/runtime';
import { webhookDispatcherEnvSchema, webhookDispatcherService } from '@pack/webhook-dispatcher';
import { seededSecret, waitFor } from '@pack/testkit';
import { startStack, type Stack } from '../stack';

/** The playbook webhook's authorization (seeded for the suite-wide leak scan). */
const PLAYBOOK_AUTHORIZATION = `Bearer playbook-token-${seededSecret('the playbook authorization', { suffix: '42' })}`;

/**
 * Webhooks through the gateway with the real catalog: the dispatcher learns the Service and its
 * owner from the catalog's events, and a consumer's submission reaches the owner's receiver.
 */
describe('webhooks through the gateway', () => {
  let stack: Stack;
  let owner: string;
  let stranger: string;
  let consumer: string;
  let server: http.Server;
  let target = '';
  const received: { headers: http.IncomingHttpHeaders; body: string }[] = [];
  /** Statuses the receiver answers on a path, in order (then 200). */
  const answers = new Map<string, number[]>();

  beforeAll(async () => {
    server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
        res.statusCode = answers.get(req.url ?? '')?.shift() ?? 200;
        res.end('thanks');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    target = `http://127.0.0.1:${(server.address() as AddressInfo).port}/playbook`;
    stack = await startStack();
    owner = await stack.issueToken('service_owner');
    stranger = await stack.issueToken('service_owner');
    consumer = await stack.issueToken('consumer');
  });
  afterAll(async () => {
    await stack?.stop();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('fires a signed request at submission for the Service the owner created in the catalog', async () => {
    const service = await stack.call('POST', '/v1/catalog/services/', {
      token: owner,
      body: { name: 'Webhooked service', description: '' },
    });
    expect(service.status).toBe(201);
    // The dispatcher knows the Service once the catalog's event arrived.
    const created = await waitFor(async () => {
      const reply = await stack.call('POST', '/v1/external/serviceowner/webhooks/', {
        token: owner,
        body: {
          name: 'Playbook',
          description: 'runs at submission',
          service: service.body.id,
          target_url: target,
          authorization: PLAYBOOK_AUTHORIZATION,
        },
      });
      return reply.status === 201 ? reply : undefined;
    });
    const other = await stack.call('GET', `/v1/external/serviceowner/webhooks/${created.body.id}/`, {
      token: stranger,
    });
    expect(other.status).toBe(404);

    const submitted = await stack.call('POST', `/v1/catalog/services/${service.body.id}/declarations/`, {
      token: consumer,
      body: { declaration: { size: 'small' } },
    });
    expect(submitted.status).toBe(201);
    const request = await waitFor(() => received[0]);
    expect(JSON.parse(request.body)).toEqual({
      id: service.body.id,
      name: 'Webhooked service',
      owner: service.body.owner,
      state: 'PENDING',
    });
    expect(request.headers.authorization).toBe(PLAYBOOK_AUTHORIZATION);
    const headers = {
      'webhook-id': String(request.headers['webhook-id']),
      'webhook-timestamp': String(request.headers['webhook-timestamp']),
      'webhook-signature': String(request.headers['webhook-signature']),
    };
    expect(new Webhook(created.body.secret).verify(request.body, headers)).toEqual(JSON.parse(request.body));

    const responses = await waitFor(async () => {
      const reply = await stack.call(
        'GET',
        `/v1/external/serviceowner/webhooks/${created.body.id}/responses/`,
        {
          token: owner,
        },
      );
      return reply.body.results?.[0]?.state === 'OK' ? reply.body : undefined;
    });
    expect(responses.results[0]).toMatchObject({
      mode: 'submission',
      change_instance_id: submitted.body.change_instance.id,
      status_code: 200,
      response_body: 'thanks',
    });
  });

  it('clears the authorization when an admin gives the Service to another owner in the catalog', async () => {
    const service = await stack.call('POST', '/v1/catalog/services/', {
      token: owner,
      body: { name: 'Handed-over service' },
    });
    const hook = await waitFor(async () => {
      const reply = await stack.call('POST', '/v1/external/serviceowner/webhooks/', {
        token: owner,
        body: {
          name: 'Handed over',
          service: service.body.id,
          target_url: target,
          authorization: `Bearer handover-token-${seededSecret('the handed-over authorization', { suffix: '77' })}`,
        },
      });
      return reply.status === 201 ? reply.body : undefined;
    });
    const me = await stack.call('GET', '/v1/core/me/', { token: stranger });
    const given = await stack.call('PATCH', `/v1/catalog/services/${service.body.id}/`, {
      body: { owner: { id: me.body.id, name: me.body.username } },
    });
    expect(given.status).toBe(200);
    const theirs = await waitFor(async () => {
      const reply = await stack.call('GET', `/v1/external/serviceowner/webhooks/${hook.id}/`, {
        token: stranger,
      });
      return reply.status === 200 ? reply.body : undefined;
    });
    expect(theirs).toMatchObject({ owner: { id: me.body.id }, target_url: target, authorization: '' });
    expect(
      (await stack.call('GET', `/v1/external/serviceowner/webhooks/${hook.id}/`, { token: owner })).status,
    ).toBe(404);
    const before = received.length;
    const fired = await stack.call('POST', `/v1/external/serviceowner/webhooks/${hook.id}/trigger/`, {
      token: stranger,
      body: {},
    });
    expect(fired.status).toBe(202);
    const request = await waitFor(() => received[before]);
    expect(request.headers.authorization).toBeUndefined();
  });

  it('a target on a private network is refused by default, saying what to set and where', async () => {
    const service = await stack.call('POST', '/v1/catalog/services/', {
      token: owner,
      body: { name: 'Private target service' },
    });
    const refused = await waitFor(async () => {
      const reply = await stack.call('POST', '/v1/external/serviceowner/webhooks/', {
        token: owner,
        body: { name: 'Inside', service: service.body.id, target_url: 'http://10.0.0.5:8000/hook' },
      });
      return reply.status === 400 && reply.body.errors?.target_url ? reply.body : undefined;
    });
    expect(refused.errors.target_url).toEqual([
      'host 10.0.0.5 is a private address: webhook targets may reach it only if PACK_ALLOWED_TARGET_CIDRS of the webhook-dispatcher service names its range',
    ]);
    const document = JSON.stringify((await stack.openApi()).document);
    expect(document).toContain(JSON.stringify(WEBHOOK_TARGET_RULE).slice(1, -1));
  });

  it('a disabled webhook is not fired by hand: 409 naming enabled, no response recorded, nothing sent', async () => {
    const service = await stack.call('POST', '/v1/catalog/services/', {
      token: owner,
      body: { name: 'Disabled hook service' },
    });
    const hook = await waitFor(async () => {
      const reply = await stack.call('POST', '/v1/external/serviceowner/webhooks/', {
        token: owner,
        body: { name: 'Off', service: service.body.id, target_url: target, enabled: false },
      });
      return reply.status === 201 ? reply.body : undefined;
    });
    const before = received.length;
    const fired = await stack.call('POST', `/v1/external/serviceowner/webhooks/${hook.id}/trigger/`, {
      token: owner,
      body: {},
    });
    expect(fired.status).toBe(409);
    expect(Object.keys(fired.body.errors)).toEqual(['enabled']);
    expect(fired.body.detail).toContain('is disabled');
    const responses = await stack.call('GET', `/v1/external/serviceowner/webhooks/${hook.id}/responses/`, {
      token: owner,
    });
    expect(responses.body.count).toBe(0);
    expect(received.length).toBe(before);
  });

  it("lists each webhook with its Service's name and its health: the last delivery's state, failures in a row since when, disabled and why", async () => {
    const service = await stack.call('POST', '/v1/catalog/services/', {
      token: owner,
      body: { name: 'Health-checked service' },
    });
    const healthTarget = target.replace('/playbook', '/health');
    answers.set('/health', [400, 400, 200, 410]);
    const hook = await waitFor(async () => {
      const reply = await stack.call('POST', '/v1/external/serviceowner/webhooks/', {
        token: owner,
        body: { name: 'Health watched', service: service.body.id, target_url: healthTarget },
      });
      return reply.status === 201 ? reply.body : undefined;
    });
    const listed = async () => {
      const list = await stack.call('GET', '/v1/external/serviceowner/webhooks/?limit=100', { token: owner });
      expect(list.status).toBe(200);
      return list.body.results.find((entry: { id: number }) => entry.id === hook.id);
    };
    expect(await listed()).toMatchObject({
      service: service.body.id,
      service_name: 'Health-checked service',
      enabled: true,
      health: { last_state: null, last_at: null, failures_in_row: 0, failing_since: null },
    });
    /** Fires once and waits until the list shows the fire's outcome. */
    const fire = async (expected: { last_state: string; failures_in_row: number }) => {
      const fired = await stack.call('POST', `/v1/external/serviceowner/webhooks/${hook.id}/trigger/`, {
        token: owner,
        body: {},
      });
      expect(fired.status).toBe(202);
      return waitFor(async () => {
        const entry = await listed();
        return entry.health.last_state === expected.last_state &&
          entry.health.failures_in_row === expected.failures_in_row
          ? entry
          : undefined;
      });
    };
    const firstFailure = await fire({ last_state: 'FAILED', failures_in_row: 1 });
    const responses = await stack.call('GET', `/v1/external/serviceowner/webhooks/${hook.id}/responses/`, {
      token: owner,
    });
    const since = responses.body.results[0].scheduled_for;
    expect(firstFailure.health).toEqual({
      last_state: 'FAILED',
      last_at: responses.body.results[0].updated_at,
      failures_in_row: 1,
      failing_since: since,
    });
    // A second failure adds to the run; the run is dated from its first failure.
    expect((await fire({ last_state: 'FAILED', failures_in_row: 2 })).health.failing_since).toBe(since);
    // An OK delivery ends the run.
    expect((await fire({ last_state: 'OK', failures_in_row: 0 })).health.failing_since).toBeNull();
    // 410 Gone disables the webhook: the list says so, and why.
    const gone = await fire({ last_state: 'FAILED', failures_in_row: 1 });
    expect(gone.enabled).toBe(false);
    expect(gone.disabled_reason).toMatch(/410/);
  });

  it('a lowered webhook_response_retention trims the kept responses within a sweep, with no further delivery: "keeps only the N newest responses per webhook"', async () => {
    const HOOKS = '/v1/external/serviceowner/webhooks/';
    const service = await stack.call('POST', '/v1/catalog/services/', {
      token: owner,
      body: { name: 'Retained service', description: '' },
    });
    expect(service.status).toBe(201);
    const hook = await waitFor(async () => {
      const reply = await stack.call('POST', HOOKS, {
        token: owner,
        body: { name: 'Kept', service: service.body.id, target_url: target },
      });
      return reply.status === 201 ? (reply.body as { id: number }) : undefined;
    });
    const listed = async () =>
      (await stack.call('GET', `${HOOKS}${hook.id}/responses/?state=OK&limit=100`, { token: owner }))
        .body as {
        count: number;
        results: { id: number }[];
      };
    for (let n = 0; n < 15; n += 1) {
      expect(
        (await stack.call('POST', `${HOOKS}${hook.id}/trigger/`, { token: owner, body: {} })).status,
      ).toBe(202);
    }
    await waitFor(async () => (await listed()).count === 15, { what: '15 delivered fires', intervalMs: 300 });

    const lowered = await stack.call('PATCH', '/v1/core/general_settings/', {
      body: { external_api: { webhook_response_retention: 10 } },
    });
    expect(lowered.status).toBe(200);
    try {
      // No fire follows: the sweep alone brings the list down to the cap, the newest kept.
      const trimmed = await waitFor(
        async () => {
          const page = await listed();
          return page.count === 10 ? page : undefined;
        },
        { what: 'the responses trimmed to 10', intervalMs: 300 },
      );
      expect(trimmed.results.map((r) => r.id)).toEqual(Array.from({ length: 10 }, (_, i) => 15 - i));
    } finally {
      await stack.call('PATCH', '/v1/core/general_settings/', {
        body: { external_api: { webhook_response_retention: 100 } },
      });
    }
  });

  it("walks a webhook's responses, the responses across webhooks and the webhooks by their next links: the same records as one long page (lists flat at any depth)", async () => {
    const HOOKS = '/v1/external/serviceowner/webhooks/';
    const service = await stack.call('POST', '/v1/catalog/services/', {
      token: owner,
      body: { name: 'Paged responses', description: '' },
    });
    const hook = await waitFor(async () => {
      const reply = await stack.call('POST', HOOKS, {
        token: owner,
        body: { name: 'Paged', service: service.body.id, target_url: target },
      });
      return reply.status === 201 ? (reply.body as { id: number }) : undefined;
    });
    for (let n = 0; n < 5; n += 1)
      expect(
        (await stack.call('POST', `${HOOKS}${hook.id}/trigger/`, { token: owner, body: {} })).status,
      ).toBe(202);
    const get = async (path: string) => {
      const reply = await stack.call('GET', path, { token: owner });
      expect(reply.status).toBe(200);
      return reply.body as {
        count: number;
        next: string | null;
        results: { id: number; message_id?: string }[];
      };
    };
    const across = `/v1/external/serviceowner/webhook_responses/?webhook=${hook.id}`;
    await waitFor(async () => (await get(`${across}&state=OK`)).count === 5, {
      what: '5 delivered fires',
      intervalMs: 300,
    });
    for (const path of [`${HOOKS}${hook.id}/responses/?state=OK`, `${across}&state=OK`, HOOKS]) {
      const whole = (await get(`${path}${path.includes('?') ? '&' : '?'}limit=100`)).results.map((r) => r.id);
      const seen: number[] = [];
      let next: string | null = `${path}${path.includes('?') ? '&' : '?'}limit=2`;
      while (next !== null && seen.length <= whole.length) {
        const page = await get(next);
        seen.push(...page.results.map((r) => r.id));
        next = page.next;
        if (next !== null) expect(next).toMatch(/[?&]after=/);
      }
      expect({ path, seen }).toEqual({ path, seen: whole });
    }
    const refused = await stack.call('GET', `${across}&after=5`, { token: owner });
    expect(refused.status).toBe(400);
    expect(Object.keys(refused.body.errors)).toEqual(['query.after']);
  });

  it('a dispatcher restarted while the settings service is down is not ready and acts on nothing until it has read the settings', async () => {
    const lowered = await stack.call('PATCH', '/v1/core/general_settings/', {
      body: { external_api: { webhook_response_retention: 200 } },
    });
    expect(lowered.status).toBe(200);
    // The settings service as this dispatcher sees it: down until the test starts this proxy.
    const settingsUrl = new URL(stack.urls.settings!);
    const proxy = http.createServer((req, res) => {
      const upstream = http.request(
        {
          host: settingsUrl.hostname,
          port: settingsUrl.port,
          path: req.url,
          method: req.method,
          headers: req.headers,
        },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.pipe(res);
        },
      );
      req.pipe(upstream);
    });
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    const port = (proxy.address() as AddressInfo).port;
    await new Promise<void>((resolve) => proxy.close(() => resolve()));

    const replica = await startService(
      webhookDispatcherService,
      loadConfig(webhookDispatcherEnvSchema, {
        ...stack.envs['webhook-dispatcher'],
        SETTINGS_URL: `http://127.0.0.1:${port}`,
      }),
    );
    try {
      const readyz = async () => {
        const answer = await fetch(`${replica.metricsUrl}/readyz`);
        return {
          status: answer.status,
          checks: ((await answer.json()) as { checks: Record<string, boolean> }).checks,
        };
      };
      // Its database answers, yet it is not ready: its settings are not confirmed.
      const waiting = await waitFor(async () => {
        const probe = await readyz();
        return probe.checks.database && (probe.status === 200 || probe.checks.settings === false)
          ? probe
          : undefined;
      });
      expect(waiting.status).toBe(503);
      expect(waiting.checks).toMatchObject({ settings: false, started: false });
      expect(replica.context.broker.isReady()).toBe(false);

      await new Promise<void>((resolve) => proxy.listen(port, '127.0.0.1', resolve));
      await replica.started;
      const ready = await waitFor(async () => {
        const probe = await readyz();
        return probe.status === 200 ? probe : undefined;
      });
      expect(ready.checks).toMatchObject({ settings: true, started: true });
    } finally {
      await replica.stop();
      proxy.closeAllConnections();
      await new Promise<void>((resolve) => proxy.close(() => resolve()));
      await stack.call('PATCH', '/v1/core/general_settings/', {
        body: { external_api: { webhook_response_retention: 100 } },
      });
    }
  });
});
