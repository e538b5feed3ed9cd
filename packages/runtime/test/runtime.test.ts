import net from 'node:net';
import { on } from '@pack/broker';
import { loadConfig, serviceEnvSchema } from '@pack/config';
import { connectMongo } from '@pack/db';
import { createLogger } from '@pack/logging';
import { createMetrics } from '@pack/metrics';
import { events } from '@pack/contracts';
import { route } from '@pack/http-kit';
import { LogCapture, runEntryPoint, stopAndClean, TcpProxy, testEnv, waitFor } from '@pack/testkit';
import { startService, type ServiceDefinition } from '../src';

const schema = serviceEnvSchema({ port: 0, database: 'unused' });
type Config = ReturnType<typeof schema.parse>;

const definition: ServiceDefinition<Config> = {
  name: 'probe',
  version: '0.0.1',
  setup: ({ logger }) => ({
    routes: [
      route({
        method: 'get',
        path: '/v1/probe/',
        summary: 'says hello',
        access: 'public',
        responses: { 200: { description: 'hello' } },
        handler: () => {
          logger.info('probe called');
          return { body: { hello: true } };
        },
      }),
    ],
    consumers: [{ name: 'probe.settings', handlers: [on(events.settingsChanged, async () => undefined)] }],
  }),
};

const readiness = async (url: string) =>
  (await (await fetch(`${url}/readyz`)).json()) as { status: string; checks: Record<string, boolean> };

describe('a service started by the runtime', () => {
  it('listens at once, reports not-ready while MongoDB and RabbitMQ are unreachable, and becomes ready when they answer', async () => {
    const mongoProxy = await TcpProxy.forUrl(process.env.MONGO_URL!).start();
    const amqpProxy = await TcpProxy.forUrl(process.env.AMQP_URL!).start();
    mongoProxy.cut();
    amqpProxy.cut();
    const env = testEnv('probe');
    const service = await startService(
      definition,
      loadConfig(schema, {
        ...env,
        MONGO_URL: mongoProxy.rewrite(env.MONGO_URL!),
        AMQP_URL: amqpProxy.rewrite(env.AMQP_URL!),
      }),
    );
    try {
      expect((await fetch(`${service.url}/healthz`)).status).toBe(200);
      const down = await fetch(`${service.url}/readyz`);
      expect(down.status).toBe(503);
      expect(await down.json()).toMatchObject({
        status: 'not_ready',
        checks: { database: false, broker: false },
      });
      mongoProxy.restore();
      amqpProxy.restore();
      await waitFor(async () => (await readiness(service.url)).status === 'ready', {
        what: 'readiness',
      });
      expect((await readiness(service.url)).checks).toEqual({ database: true, broker: true, started: true });
    } finally {
      await stopAndClean(service);
      await mongoProxy.stop();
      await amqpProxy.stop();
    }
  });

  it('logs JSON lines carrying the request id as correlation id, and stops gracefully', async () => {
    const logs = new LogCapture();
    const service = await startService(
      definition,
      loadConfig(schema, { ...testEnv('probe'), LOG_LEVEL: 'info' }),
      { logDestination: logs },
    );
    await service.started;
    const response = await fetch(`${service.url}/v1/probe/`, { headers: { 'x-request-id': 'req-777' } });
    expect(await response.json()).toEqual({ hello: true });
    await stopAndClean(service);
    const line = logs.records().find((record) => record.msg === 'probe called');
    expect(line).toMatchObject({
      service: 'probe',
      version: '0.0.1',
      correlation_id: 'req-777',
      request_id: 'req-777',
    });
    await expect(fetch(`${service.url}/healthz`)).rejects.toThrow();
  });

  it('removes idempotency markers older than PROCESSED_EVENTS_RETENTION_DAYS for a service with consumers', async () => {
    const env = testEnv('probe', { PROCESSED_EVENTS_RETENTION_DAYS: '2' });
    const hoursAgo = (hours: number) => new Date(Date.now() - hours * 60 * 60 * 1000);
    const seed = connectMongo({
      url: env.MONGO_URL!,
      dbName: env.MONGO_DB!,
      logger: createLogger({ service: 'seed', version: '0', level: 'silent' }),
      metrics: createMetrics('seed'),
    });
    await seed.connected;
    await seed.connection.collection<{ _id: string; at: Date }>('processed_events').insertMany([
      { _id: 'probe.settings:old', at: hoursAgo(49) },
      { _id: 'probe.settings:recent', at: hoursAgo(47) },
    ]);
    await seed.close();
    const service = await startService(definition, loadConfig(schema, env));
    try {
      await service.started;
      const markers = service.context.mongo.connection.collection('processed_events');
      await waitFor(async () => (await markers.countDocuments()) === 1, { what: 'the sweep at start' });
      expect(await markers.find().toArray()).toEqual([
        { _id: 'probe.settings:recent', at: expect.any(Date) },
      ]);
    } finally {
      await stopAndClean(service);
    }
  });

  it('answers a request line or headers too long with 431 problem+json, and malformed HTTP with 400', async () => {
    const service = await startService(definition, loadConfig(schema, testEnv('probe')));
    const raw = (request: string) =>
      new Promise<string>((resolve, reject) => {
        const socket = net.connect(service.port, '127.0.0.1', () => socket.write(request));
        let answer = '';
        socket.on('data', (chunk: Buffer) => (answer += chunk.toString('utf8')));
        socket.on('end', () => resolve(answer));
        socket.on('error', reject);
      });
    const parts = (answer: string) => {
      const [head = '', body = ''] = answer.split('\r\n\r\n');
      return { statusLine: head.split('\r\n')[0], head, body: JSON.parse(body) as Record<string, unknown> };
    };
    try {
      const longLine = parts(await raw(`GET /v1/probe/?q=${'x'.repeat(20_000)} HTTP/1.1\r\nHost: a\r\n\r\n`));
      expect(longLine.statusLine).toBe('HTTP/1.1 431 Request Header Fields Too Large');
      expect(longLine.head).toMatch(/content-type: application\/problem\+json/i);
      expect(longLine.body).toMatchObject({ status: 431, title: 'Request header fields too large' });
      const longHeader = parts(
        await raw(`GET /v1/probe/ HTTP/1.1\r\nHost: a\r\nx-big: ${'y'.repeat(20_000)}\r\n\r\n`),
      );
      expect(longHeader.body).toMatchObject({ status: 431 });
      const malformed = parts(await raw('GET /v1/probe/ HTTP/1.1\r\nHost a\r\n\r\n'));
      expect(malformed.statusLine).toBe('HTTP/1.1 400 Bad Request');
      expect(malformed.body).toMatchObject({ status: 400, type: 'urn:pack:problem:bad-request' });
      // The server still answers ordinary requests.
      expect((await fetch(`${service.url}/healthz`)).status).toBe(200);
    } finally {
      await stopAndClean(service);
    }
  });

  it('refuses to start with a bad variable, naming it', async () => {
    const result = await runEntryPoint('services/gateway/src/main.ts', [], {
      PACK_INTERNAL_SECRET: 'short',
      MONGO_URL: 'http://nope',
    });
    expect(result.status).toBe(78);
    expect(result.stderr).toContain('PACK_INTERNAL_SECRET: must be at least 32 characters');
    expect(result.stderr).toContain('MONGO_URL: must be a mongodb:// URL');
  });
});
