/**
 * Graceful shutdown of the two gateways, each run as its own process (see graceful-shutdown.test.ts
 * for settings and catalog): the public gateway under keep-alive HTTP load proxied to a service,
 * and the llm-gateway while generate requests flow through the broker to a fake provider.
 * SIGTERM: no request in flight fails, the process exits 0, and after a restart every generate
 * request has exactly one result, none lost.
 */
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import amqp from 'amqplib';
import { events, type Principal } from '@pack/contracts';
import {
  FakeSettings,
  call,
  deleteQueues,
  dropDatabase,
  EventTap,
  freePort,
  spawnService,
  startFakeOpenAi,
  testEnv,
  waitFor,
  type FakeProviderServer,
} from '@pack/testkit';
import { loadUntilStopped, publishAll } from './shutdown';

/** The settings every service reads before it acts: a fake answering the defaults. */
const settings = new FakeSettings();
beforeAll(async () => {
  await settings.start();
});
afterAll(async () => {
  await settings.stop();
});

const WORKERS = 8;

describe('SIGTERM to the gateway while keep-alive requests flow through it to a service', () => {
  const PATH = '/v1/core/general_settings/';
  const adminToken = `pack_${randomBytes(32).toString('base64url')}`;
  let env: Record<string, string>;
  let upstream: http.Server;
  /** Requests the service behind the gateway holds right now, and those it answered. */
  let holding = 0;
  let answered = 0;

  beforeAll(async () => {
    // The settings service's place, answering after a while so that requests are in flight.
    upstream = http.createServer((request, response) => {
      // The gateway's own reads of the settings (sign-in and mail use them) are not the load.
      if (new URL(request.url ?? '/', 'http://upstream').pathname !== PATH) {
        request.resume();
        response.writeHead(404).end();
        return;
      }
      holding += 1;
      request.resume();
      setTimeout(() => {
        holding -= 1;
        answered += 1;
        response.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
      }, 150);
    });
    await new Promise<void>((resolve) => upstream.listen(0, '127.0.0.1', resolve));
    env = testEnv('gateway', {
      PORT: String(await freePort()),
      METRICS_PORT: String(await freePort()),
      LOG_LEVEL: 'info',
      PACK_ADMIN_TOKEN: adminToken,
      SETTINGS_URL: `http://127.0.0.1:${(upstream.address() as AddressInfo).port}`,
    });
  });
  afterAll(async () => {
    upstream?.closeAllConnections();
    await new Promise((resolve) => upstream?.close(resolve));
    await dropDatabase(env.MONGO_URL!, env.MONGO_DB!);
  });

  it('answers every request in flight in full, then exits 0', async () => {
    const gateway = await spawnService('gateway', env);
    const url = `http://127.0.0.1:${env.PORT}`;
    const load = loadUntilStopped(
      WORKERS,
      async () => (await call(url, 'GET', PATH, { token: adminToken })).status,
    );
    await waitFor(() => answered >= 40 && holding >= WORKERS / 2, {
      what: 'load to run, with requests held by the service',
    });
    const stopped = load.stop();
    const inFlight = holding;
    gateway.kill('SIGTERM');
    await stopped;
    const exit = await gateway.exited;

    expect(inFlight).toBeGreaterThan(0);
    expect({ status: exit.status, signal: exit.signal }).toEqual({ status: 0, signal: null });
    expect(exit.stdout).toContain('shutting down');
    expect(load.outcomes.filter((o) => o.status !== 200)).toEqual([]);
    expect(load.outcomes.length).toBe(answered); // each request reached the service once
  });
});

describe('SIGTERM to the llm-gateway while generate requests flow through the broker', () => {
  const TOTAL = 60;
  const KEY = 'sk-shutdown-0123456789abcdef';
  const admin: Principal = { id: 1, username: 'ops-admin', role: 'admin' };
  let env: Record<string, string>;
  let fake: FakeProviderServer;
  let tap: EventTap;
  let connection: amqp.ChannelModel;
  let channel: amqp.ConfirmChannel;

  beforeAll(async () => {
    fake = await startFakeOpenAi({ apiKey: KEY });
    fake.always({ latencyMs: 100 });
    env = testEnv('llm-gateway', {
      PORT: String(await freePort()),
      METRICS_PORT: String(await freePort()),
      LOG_LEVEL: 'info',
      SETTINGS_URL: settings.url,
      PACK_ALLOWED_TARGET_CIDRS: '127.0.0.0/8,::1/128',
      LLM_GENERATE_PREFETCH: '8',
    });
    tap = await EventTap.start(process.env.AMQP_URL!, env.BROKER_NAMESPACE!, [
      events.llmGenerateCompleted.type,
    ]);
    connection = await amqp.connect(process.env.AMQP_URL!);
    channel = await connection.createConfirmChannel();
  });
  afterAll(async () => {
    await tap?.stop();
    await connection?.close();
    await fake?.close();
    const queues = [`${env.BROKER_NAMESPACE}.llm-gateway.generate-requests`];
    await deleteQueues(
      process.env.AMQP_URL!,
      queues.flatMap((q) => [q, `${q}.retries`, `${q}.dlq`]),
    );
    await dropDatabase(env.MONGO_URL!, env.MONGO_DB!);
  });

  it('finishes the generations running, leaves the rest queued, and answers every request once after a restart', async () => {
    const first = await spawnService('llm-gateway', env);
    const url = `http://127.0.0.1:${env.PORT}`;
    const created = await call(url, 'POST', '/v1/ai/llm_models/', {
      principal: admin,
      body: {
        name: 'shutdown model',
        provider: 'vendor1',
        model_name: 'gpt-4o-mini',
        timeout: 10,
        input_price_per_1m_tokens: '0.15',
        output_price_per_1m_tokens: '0.6',
        extra_data: { api_key: KEY, base_url: `${fake.url}/v1` },
      },
    });
    expect(created.status).toBe(201);
    const model = (created.body as { id: number }).id;
    const requests = Array.from({ length: TOTAL }, (_, i) => ({
      request_id: `shutdown-${env.BROKER_NAMESPACE}-${i}`,
      llm_model_id: model,
      messages: [{ role: 'user' as const, content: `Say hello ${i}.` }],
      response_schema: null,
      processor_id: null,
      reply_to: null,
    }));
    await publishAll(
      channel,
      env.BROKER_NAMESPACE!,
      events.llmGenerateRequested,
      requests.map((data) => ({ data, correlationId: `shutdown-${data.request_id}` })),
    );
    const generations = () => fake.requestsTo('/chat/completions').length;
    const results = async () => new Set((await tap.drain()).map((e) => e.data.request_id as string));
    await waitFor(async () => (await results()).size >= 10 && generations() > (await results()).size, {
      what: 'results to flow, with generations in flight',
    });
    first.kill('SIGTERM');
    const exit = await first.exited;
    expect({ status: exit.status, signal: exit.signal }).toEqual({ status: 0, signal: null });
    expect((await results()).size).toBeLessThan(TOTAL); // it stopped mid-stream

    const second = await spawnService('llm-gateway', env, {
      what: 'the llm-gateway to be ready again',
    });
    try {
      await tap.waitFor(
        (received) => new Set(received.map((e) => e.data.request_id)).size >= TOTAL,
        'a result for every request',
      );
    } finally {
      second.kill('SIGTERM');
    }
    expect((await second.exited).status).toBe(0);

    // Exactly one result per request: repeats (allowed by the contract) carry the same payload.
    const byRequest = new Map<string, Set<string>>();
    const received = await tap.drain();
    for (const event of received) {
      const id = event.data.request_id as string;
      byRequest.set(id, (byRequest.get(id) ?? new Set()).add(JSON.stringify(event.data)));
    }
    expect([...byRequest.keys()].sort()).toEqual(requests.map((r) => r.request_id).sort());
    expect([...byRequest.entries()].filter(([, payloads]) => payloads.size !== 1)).toEqual([]);
    const failed = received.filter((e) => e.data.ok !== true).map((e) => e.data);
    expect(failed).toEqual([]);
    expect(generations()).toBe(TOTAL); // the provider was called once per request, none twice
    expect(
      (await channel.checkQueue(`${env.BROKER_NAMESPACE}.llm-gateway.generate-requests.dlq`)).messageCount,
    ).toBe(0);
  });
});
