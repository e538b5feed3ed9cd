import { FakeSettings, call, waitFor } from '@pack/testkit';
import { startGatewayPair, type GatewayHarness } from './harness';

/** Health requests from `client` (one proxy in front of the gateway reports the address). */
const health = (gateway: GatewayHarness, path: string, client: string) =>
  call(gateway.url, 'GET', path, { headers: { 'x-forwarded-for': client } });

let clients = 0;
/** Every test counts on its own client addresses, so no test sees another's windows. */
const newClient = () => `198.51.100.${(clients += 1)}`;

describe('healthcheck limits on the public health endpoints', () => {
  const settings = new FakeSettings();
  let env: Record<string, string>;
  let a: GatewayHarness;
  let b: GatewayHarness;

  beforeAll(async () => {
    settings.document.external_api.healthcheck_rate_limit_per_minute = 5;
    settings.document.external_api.healthcheck_response_rate_limit = 3;
    await settings.start();
    [a, b] = await startGatewayPair({ env: { SETTINGS_URL: settings.url, TRUSTED_PROXY_HOPS: '1' } });
    env = a.env;
    // Both replicas have read the settings once a fresh client's sixth request is refused on each.
    for (const gateway of [a, b])
      await waitFor(
        async () => {
          const client = newClient();
          for (let i = 0; i < 5; i += 1) await health(gateway, '/healthz', client);
          return (await health(gateway, '/healthz', client)).status === 429;
        },
        { what: 'the settings read' },
      );
  });

  afterAll(async () => {
    await a?.stop();
    await b?.stop();
    await settings.stop();
  });

  it('answers 429 problem+json with Retry-After beyond healthcheck_rate_limit_per_minute, counted across replicas', async () => {
    const client = newClient();
    const statuses: number[] = [];
    for (const gateway of [a, b, a, b, a]) statuses.push((await health(gateway, '/healthz', client)).status);
    expect(statuses).toEqual([200, 200, 200, 200, 200]);

    for (const gateway of [b, a]) {
      const refused = await health(gateway, '/healthz', client);
      expect(refused.status).toBe(429);
      expect(refused.headers.get('content-type')).toContain('application/problem+json');
      expect(refused.body).toMatchObject({
        status: 429,
        detail: expect.stringContaining('healthcheck_rate_limit_per_minute'),
      });
      const retryAfter = Number(refused.headers.get('retry-after'));
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(60);
    }
    // Another client, and the probes on the internal metrics port, are not held back.
    expect((await health(a, '/healthz', newClient())).status).toBe(200);
    expect((await fetch(`${a.metricsUrl}/readyz`, { headers: { 'x-forwarded-for': client } })).status).toBe(
      200,
    );
  });

  it('allows fewer readiness reports (healthcheck_response_rate_limit) than health requests', async () => {
    const client = newClient();
    for (const gateway of [a, b, a]) {
      const report = await health(gateway, '/readyz', client);
      expect(report.status).toBe(200);
      expect(report.body).toMatchObject({ status: 'ready', checks: { database: true } });
    }
    const refused = await health(b, '/readyz', client);
    expect(refused.status).toBe(429);
    expect(refused.body).toMatchObject({
      detail: expect.stringContaining('healthcheck_response_rate_limit'),
    });
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    // The liveness answer still has room: 4 of the 5 requests are used.
    expect((await health(a, '/healthz', client)).status).toBe(200);
    expect((await health(a, '/healthz', client)).status).toBe(429);
  });

  it('applies a changed limit without a restart', async () => {
    const client = newClient();
    for (let i = 0; i < 5; i += 1) expect((await health(a, '/healthz', client)).status).toBe(200);
    expect((await health(a, '/healthz', client)).status).toBe(429);

    await settings.change(env.AMQP_URL!, env.BROKER_NAMESPACE!, (document) => {
      document.external_api.healthcheck_rate_limit_per_minute = 50;
    });
    for (const gateway of [a, b])
      await waitFor(async () => (await health(gateway, '/healthz', client)).status === 200, {
        what: 'the raised limit',
      });

    await settings.change(env.AMQP_URL!, env.BROKER_NAMESPACE!, (document) => {
      document.external_api.healthcheck_rate_limit_per_minute = 5;
    });
    await waitFor(async () => (await health(b, '/healthz', client)).status === 429, {
      what: 'the lowered limit',
    });
  });
});
