import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import type { mongo } from 'mongoose';
import { call as request, CEILINGS, runEntryPoint, waitFor } from '@pack/testkit';
import { startGatewayPair, type GatewayHarness } from './harness';
import { verifyPrincipal } from '@pack/http-kit';

const newToken = () => `pack_${randomBytes(32).toString('base64url')}`;

/** A service behind the gateway: records what reached it; `/slow/` never answers in time. */
async function startUpstream() {
  const seen: (http.IncomingHttpHeaders & { url: string })[] = [];
  const timers = new Set<NodeJS.Timeout>();
  const bodies = new Map<string, string>();
  const server = http.createServer((req, res) => {
    seen.push({ ...req.headers, url: req.url ?? '' });
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      bodies.set(req.url ?? '', body);
      if (req.url?.includes('/broken/')) {
        req.socket.destroy();
        return;
      }
      if (req.url?.includes('/slow/')) {
        timers.add(setTimeout(() => res.end('{}'), CEILINGS.hang));
        return;
      }
      res.writeHead(207, { 'content-type': 'application/json', 'x-upstream': 'yes' });
      res.end(JSON.stringify({ path: req.url, method: req.method }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const close = () => {
    for (const timer of timers) clearTimeout(timer);
    server.closeAllConnections();
    return new Promise((resolve) => server.close(resolve));
  };
  return { url, seen, bodies, close };
}

describe('gateway', () => {
  const adminToken = newToken();
  let upstream: Awaited<ReturnType<typeof startUpstream>>;
  let env: Record<string, string>;
  let a: GatewayHarness;
  let b: GatewayHarness;

  const call = (
    gateway: GatewayHarness,
    method: string,
    path: string,
    token: string | null,
    body?: unknown,
    headers: Record<string, string> = {},
  ) =>
    request(gateway.url, method, path, {
      token,
      headers,
      ...(typeof body === 'string' ? { raw: body } : { body }),
    });

  beforeAll(async () => {
    upstream = await startUpstream();
    // Two replicas on one database starting at once, as in a Kubernetes Deployment.
    [a, b] = await startGatewayPair({
      env: {
        PACK_ADMIN_TOKEN: adminToken,
        SETTINGS_URL: upstream.url,
        CATALOG_URL: 'http://127.0.0.1:9', // nothing listens there
        PIPELINE_ORCHESTRATOR_URL: upstream.url,
        // Room for a loaded machine's answering upstream: only /slow/, which never answers, meets it.
        UPSTREAM_TIMEOUT_MS: '2000',
        REVOCATION_POLL_MS: '200',
        BODY_LIMIT_BYTES: '4096',
      },
    });
    env = a.env;
  });

  afterAll(async () => {
    await b.stop();
    await a.stop();
    await upstream.close();
  });

  describe('/v1/core/tokens/', () => {
    it('lets an admin create a user with a token, shown once, that then works on every replica', async () => {
      const created = await call(a, 'POST', '/v1/core/tokens/', adminToken, {
        username: 'olivia',
        role: 'service_owner',
      });
      expect(created.status).toBe(201);
      const body = created.body as {
        id: number;
        token: string;
        user: { id: number; username: string; role: string };
      };
      expect(body.token).toMatch(/^pack_/);
      expect(body.user).toMatchObject({ username: 'olivia', role: 'service_owner' });

      const list = await call(b, 'GET', '/v1/core/tokens/', adminToken);
      expect(list.status).toBe(200);
      expect(list.text).not.toContain(body.token);
      expect(list.text).not.toContain('token_hash');
      const page = list.body as {
        count: number;
        results: { id: number; prefix: string; user: { username: string } }[];
      };
      expect(page.results.find((t) => t.id === body.id)).toMatchObject({
        prefix: body.token.slice(0, 11),
        user: { username: 'olivia' },
      });

      const forwarded = await call(b, 'GET', '/v1/core/general_settings/', body.token);
      expect(forwarded.status).toBe(207);
    });

    it('refuses callers without a token (401) or without the admin role (403), storing nothing', async () => {
      const consumer = (
        await call(a, 'POST', '/v1/core/tokens/', adminToken, { username: 'carl', role: 'consumer' })
      ).body as { token: string };
      const before = (await call(a, 'GET', '/v1/core/tokens/', adminToken)).body.count as number;
      const anonymous = await call(a, 'POST', '/v1/core/tokens/', null, { username: 'x', role: 'admin' });
      expect(anonymous.status).toBe(401);
      expect(anonymous.headers.get('content-type')).toContain('application/problem+json');
      expect(
        (await call(a, 'POST', '/v1/core/tokens/', consumer.token, { username: 'x', role: 'admin' })).status,
      ).toBe(403);
      expect((await call(a, 'GET', '/v1/core/tokens/', consumer.token)).status).toBe(403);
      expect(
        (await call(a, 'POST', '/v1/core/tokens/', `${adminToken}x`, { username: 'x', role: 'admin' }))
          .status,
      ).toBe(401);
      const after = (await call(a, 'GET', '/v1/core/tokens/', adminToken)).body.count as number;
      expect(after).toBe(before);
    });

    it('answers 400 naming the field for a bad body, 415 for a non-JSON body, 409 for a role clash', async () => {
      const bad = await call(a, 'POST', '/v1/core/tokens/', adminToken, {
        username: 'has space',
        role: 'emperor',
        extra: 1,
      });
      expect(bad.status).toBe(400);
      const problem = bad.body as { errors: Record<string, string[]> };
      expect(Object.keys(problem.errors).sort()).toEqual(['extra', 'role', 'username']);
      const form = await call(a, 'POST', '/v1/core/tokens/', adminToken, 'username=x', {
        'content-type': 'text/plain',
      });
      expect(form.status).toBe(415);
      const malformed = await call(a, 'POST', '/v1/core/tokens/', adminToken, '{"username":');
      expect(malformed.status).toBe(400);
      await call(a, 'POST', '/v1/core/tokens/', adminToken, { username: 'dora', role: 'consumer' });
      const clash = await call(a, 'POST', '/v1/core/tokens/', adminToken, {
        username: 'dora',
        role: 'admin',
      });
      expect(clash.status).toBe(409);
      const list = (await call(a, 'GET', '/v1/core/tokens/?limit=500', adminToken)).body as {
        results: { user: { username: string } }[];
      };
      expect(list.results.filter((t) => t.user.username === 'dora')).toHaveLength(1);
      expect(list.results.some((t) => t.user.username === 'x' || t.user.username === 'has space')).toBe(
        false,
      );
    });

    it('revokes a token on every replica', async () => {
      const issued = (
        await call(a, 'POST', '/v1/core/tokens/', adminToken, { username: 'rita', role: 'consumer' })
      ).body as { id: number; token: string };
      // Both replicas have the token cached.
      expect((await call(a, 'GET', '/v1/core/general_settings/', issued.token)).status).toBe(207);
      expect((await call(b, 'GET', '/v1/core/general_settings/', issued.token)).status).toBe(207);
      const started = Date.now();
      expect((await call(a, 'DELETE', `/v1/core/tokens/${issued.id}/`, adminToken)).status).toBe(204);
      expect((await call(a, 'GET', '/v1/core/general_settings/', issued.token)).status).toBe(401);
      await waitFor(
        async () => (await call(b, 'GET', '/v1/core/general_settings/', issued.token)).status === 401,
        {
          what: 'the other replica to refuse the revoked token',
          intervalMs: 20,
        },
      );
      process.stdout.write(`revocation reached the other replica after ${Date.now() - started} ms\n`);
      expect((await call(a, 'DELETE', '/v1/core/tokens/999999/', adminToken)).status).toBe(404);
    });
  });

  describe('routing', () => {
    it('forwards to the owning service with a signed principal, never the caller token or forged headers', async () => {
      // The gateway also reads its settings from this upstream in the background: pick the forwarded call.
      const path = '/v1/external/serviceowner/pack/data/service_item/4/config/?x=1';
      const response = await call(
        a,
        'POST',
        path,
        adminToken,
        { a: 1 },
        {
          'x-pack-principal': 'forged',
          'x-request-id': 'trace-me',
        },
      );
      expect(response.status).toBe(207);
      expect(response.headers.get('x-upstream')).toBe('yes');
      expect(response.headers.get('x-request-id')).toBe('trace-me');
      expect(response.body).toEqual({
        path: '/v1/external/serviceowner/pack/data/service_item/4/config/?x=1',
        method: 'POST',
      });
      const headers = upstream.seen.find((seen) => seen.url === path)!;
      expect(headers.authorization).toBeUndefined();
      expect(headers['x-request-id']).toBe('trace-me');
      expect(upstream.bodies.get(path)).toBe('{"a":1}');
      const principal = verifyPrincipal(
        env.PACK_INTERNAL_SECRET!,
        'POST',
        '/v1/external/serviceowner/pack/data/service_item/4/config/?x=1',
        headers,
      );
      expect(principal).toMatchObject({ username: 'admin', role: 'admin' });
    });

    it('answers 503 when the owning service is down, 504 when it is too slow, 502 when it breaks off, 413 for a body over the limit', async () => {
      const down = await call(a, 'GET', '/v1/catalog/services/', adminToken);
      expect(down.status).toBe(503);
      expect(down.body).toMatchObject({ status: 503, detail: 'the catalog service is unavailable' });
      const slow = await call(a, 'GET', '/v1/core/general_settings/slow/', adminToken);
      expect(slow.status).toBe(504);
      const broken = await call(a, 'GET', '/v1/core/general_settings/broken/', adminToken);
      expect(broken.status).toBe(502);
      expect(broken.body).toMatchObject({
        status: 502,
        detail: 'the settings service failed to answer',
      });
      const big = await call(a, 'POST', '/v1/core/general_settings/', adminToken, { blob: 'x'.repeat(5000) });
      expect(big.status).toBe(413);
    });

    it('authenticates before routing and answers 404 for paths nobody owns', async () => {
      expect((await call(a, 'GET', '/v1/catalog/services/', null)).status).toBe(401);
      const unknown = await call(a, 'GET', '/v1/nope/', adminToken);
      expect(unknown.status).toBe(404);
      expect(unknown.headers.get('content-type')).toContain('application/problem+json');
    });

    it('sends no database command for a warm token', async () => {
      const quiet = await a.replica({ env: { REVOCATION_POLL_MS: '10000' } });
      try {
        expect((await call(quiet, 'GET', '/v1/core/general_settings/', adminToken)).status).toBe(207);
        // Start-up work ends first: the broker connects (the gateway sends mail) and the outbox
        // relay looks once; after that the counts stay still.
        await waitFor(async () => (await fetch(`${quiet.url}/readyz`)).ok, { what: 'readiness' });
        const samples: string[] = [];
        await waitFor(
          () => {
            samples.push(JSON.stringify(quiet.service.context.mongo.commandCounts()));
            return samples.length >= 4 && new Set(samples.slice(-4)).size === 1;
          },
          { intervalMs: 250, what: 'start-up commands to end' },
        );
        // Every command the calls could send, but the revocation poll's: it runs on its own clock
        // (at most every 10 s), which 50 calls on a loaded machine may outlast.
        const sent: string[] = [];
        const client = quiet.service.context.mongo.connection.getClient();
        const record = (event: mongo.CommandStartedEvent) => {
          const poll =
            event.commandName === 'find' && JSON.stringify(event.command).includes('revocation_seq');
          if (!poll) sent.push(`${event.commandName} ${JSON.stringify(event.command[event.commandName])}`);
        };
        client.on('commandStarted', record);
        try {
          for (let i = 0; i < 50; i += 1)
            expect((await call(quiet, 'GET', '/v1/core/general_settings/', adminToken)).status).toBe(207);
        } finally {
          client.off('commandStarted', record);
        }
        expect(sent).toEqual([]);
      } finally {
        await quiet.stop();
      }
    });
  });

  it('issues tokens from the command line, for a first admin without PACK_ADMIN_TOKEN', async () => {
    const result = await runEntryPoint(
      'services/gateway/src/cli.ts',
      ['create-token', 'cli-admin', 'admin'],
      {
        MONGO_URL: env.MONGO_URL,
        MONGO_DB: env.MONGO_DB,
        PACK_INTERNAL_SECRET: env.PACK_INTERNAL_SECRET,
      },
    );
    expect(result.status).toBe(0);
    const token = result.stdout.trim();
    expect(token).toMatch(/^pack_/);
    const list = await call(a, 'GET', '/v1/core/tokens/', token);
    expect(list.status).toBe(200);
    const usage = await runEntryPoint('services/gateway/src/cli.ts', ['create-token', 'x', 'emperor'], {});
    expect(usage.status).toBe(64);
    expect(usage.stderr).toContain('usage: cli create-token');
  });

  it('registers PACK_ADMIN_TOKEN once, however many replicas start with it', async () => {
    const list = (await call(a, 'GET', '/v1/core/tokens/?limit=500', adminToken)).body as {
      results: { user: { username: string } }[];
    };
    expect(list.results.filter((t) => t.user.username === 'admin')).toHaveLength(1);
  });

  it('reports ready with its database, and exposes metrics on its metrics port only', async () => {
    const ready = await fetch(`${a.url}/readyz`);
    expect(await ready.json()).toMatchObject({ status: 'ready', checks: { database: true } });
    const metrics = await fetch(`${a.metricsUrl}/metrics`);
    expect(metrics.status).toBe(200);
    const text = await metrics.text();
    expect(text).toContain('db_commands_total');
    expect(text).toContain('http_request_duration_seconds_bucket');
    const internal = await fetch(`${a.metricsUrl}/readyz`);
    expect(await internal.json()).toMatchObject({ status: 'ready', checks: { database: true } });
  });

  it('does not serve /metrics on its public port, with or without a token', async () => {
    const anonymous = await fetch(`${a.url}/metrics`);
    expect(anonymous.status).toBe(404);
    expect(await anonymous.text()).not.toContain('db_commands_total');
    const admin = await fetch(`${a.url}/metrics`, { headers: { authorization: `Token ${adminToken}` } });
    expect(admin.status).toBe(404);
    expect(await admin.text()).not.toContain('process_cpu_seconds_total');
  });
});
