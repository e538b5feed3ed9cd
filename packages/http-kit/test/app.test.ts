import { request as httpRequest, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { z } from 'zod';
import { createLogger } from '@pack/logging';
import { createMetrics } from '@pack/metrics';
import { call as request, LogCapture, TEST_INTERNAL_SECRET, type CallResult } from '@pack/testkit';
import { ConflictError, createHttpApp, idParams, problemSchema, route } from '../src';

const stored: unknown[] = [];
const logs = new LogCapture();

const routes = [
  route({
    method: 'post',
    path: '/v1/things/',
    summary: 'Create a thing',
    access: ['admin'],
    body: z.strictObject({ name: z.string().min(1), size: z.number().int().max(10) }),
    responses: { 201: { description: 'Created', schema: z.object({ name: z.string() }) } },
    handler: ({ body }) => {
      stored.push(body);
      return { status: 201, body: { name: body.name } };
    },
  }),
  route({
    method: 'get',
    path: '/v1/things/:id/',
    summary: 'Read a thing',
    access: 'authenticated',
    params: idParams,
    responses: { 200: { description: 'A thing', schema: z.object({ id: z.number() }) } },
    handler: ({ params }) => {
      if (params.id === 9) throw new ConflictError('thing 9 is busy');
      if (params.id === 13) throw new Error('database password is hunter2');
      return { body: { id: params.id } };
    },
  }),
  route({
    method: 'patch',
    path: '/v1/things/:id/',
    summary: 'Change a thing',
    access: ['admin'],
    params: idParams,
    body: z.strictObject({ name: z.string().optional(), size: z.number().optional() }),
    responses: { 200: { description: 'Changed', schema: z.object({ id: z.number() }) } },
    handler: ({ params, body }) => {
      stored.push(body);
      return { body: { id: params.id } };
    },
  }),
];

let server: Server;
let base: string;

beforeAll(async () => {
  const app = createHttpApp({
    service: 'things',
    logger: createLogger({ service: 'things', version: '0', destination: logs }),
    metrics: createMetrics('things'),
    routes,
    internalSecret: TEST_INTERNAL_SECRET,
    bodyLimitBytes: 2048,
    readiness: () => Promise.resolve({ database: true, broker: false }),
  });
  server = await new Promise((resolve) => {
    const s = app.listen(0, '127.0.0.1', () => resolve(s));
  });
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

const admin = { id: 1, username: 'root', role: 'admin' as const };
const consumer = { id: 2, username: 'carol', role: 'consumer' as const };

function call(
  method: string,
  path: string,
  init: {
    principal?: typeof admin | typeof consumer;
    body?: string | Uint8Array;
    type?: string;
    headers?: Record<string, string>;
  } = {},
) {
  return request(base, method, path, {
    principal: init.principal,
    raw: init.body,
    headers: { ...(init.type ? { 'content-type': init.type } : {}), ...init.headers },
  });
}

function rawRequest(
  method: string,
  path: string,
): Promise<{ status: number; headers: IncomingHttpHeaders; text: string }> {
  return new Promise((resolve, reject) => {
    const sent = httpRequest(`${base}${path}`, { method }, (response) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (text += chunk));
      response.on('end', () =>
        resolve({ status: response.statusCode ?? 0, headers: response.headers, text }),
      );
    });
    sent.on('error', reject);
    sent.end();
  });
}

function problem(response: CallResult) {
  expect(response.headers.get('content-type')).toContain('application/problem+json');
  expect(problemSchema.safeParse(response.body).success).toBe(true);
  return response.body as z.infer<typeof problemSchema>;
}

describe('an app made by createHttpApp', () => {
  beforeEach(() => {
    stored.length = 0;
  });

  it('runs a valid request and echoes the caller request id', async () => {
    const response = await call('POST', '/v1/things/', {
      principal: admin,
      body: JSON.stringify({ name: 'a', size: 3 }),
      headers: { 'x-request-id': 'abc-123' },
    });
    expect(response.status).toBe(201);
    expect(response.headers.get('x-request-id')).toBe('abc-123');
    expect(response.body).toEqual({ name: 'a' });
    expect(stored).toHaveLength(1);
  });

  it.each([
    ['no principal', {}, 401],
    [
      'a forged principal',
      {
        headers: {
          'x-pack-principal': Buffer.from(JSON.stringify(admin)).toString('base64url'),
          'x-pack-timestamp': String(Date.now()),
          'x-pack-signature': 'forged',
        },
      },
      401,
    ],
    ['the wrong role', { principal: consumer }, 403],
  ])('refuses %s and stores nothing', async (_what, init, status) => {
    const response = await call('POST', '/v1/things/', {
      ...init,
      body: JSON.stringify({ name: 'a', size: 1 }),
    });
    expect(problem(response).status).toBe(status);
    expect(stored).toHaveLength(0);
  });

  it('answers 400 naming each invalid or unknown field, and stores nothing', async () => {
    const response = await call('POST', '/v1/things/', {
      principal: admin,
      body: JSON.stringify({ name: '', size: 11, colour: 'red' }),
    });
    const body = problem(response);
    expect(body.status).toBe(400);
    expect(Object.keys(body.errors ?? {}).sort()).toEqual(['colour', 'name', 'size']);
    expect(body.errors?.colour).toEqual(['unknown field']);
    expect(stored).toHaveLength(0);
  });

  it('answers 400 for malformed JSON, 415 for another content type, 413 for a body over the limit', async () => {
    expect(problem(await call('POST', '/v1/things/', { principal: admin, body: '{"name": ' })).status).toBe(
      400,
    );
    const wrongType = problem(
      await call('POST', '/v1/things/', {
        principal: admin,
        body: 'name=a',
        type: 'application/x-www-form-urlencoded',
      }),
    );
    expect(wrongType.status).toBe(415);
    const big = JSON.stringify({ name: 'x'.repeat(4096), size: 1 });
    expect(problem(await call('POST', '/v1/things/', { principal: admin, body: big })).status).toBe(413);
    expect(stored).toHaveLength(0);
  });

  it('answers 400 for a body that is not UTF-8, holds a prototype key or is nested too deep, and stores nothing', async () => {
    const latin1 = Buffer.concat([
      Buffer.from('{"name":"Zo'),
      Buffer.from([0xeb]),
      Buffer.from('","size":1}'),
    ]);
    const cases: [string | Uint8Array, string][] = [
      [latin1, '(body)'],
      ['{"__proto__":{"size":1},"name":"a","size":1}', '__proto__'],
      ['{"name":"a","size":1,"constructor":{"prototype":{}}}', 'constructor'],
      [`{"name":"a","size":${'['.repeat(900)}${']'.repeat(900)}}`, 'size'],
    ];
    for (const [body, field] of cases) {
      const answer = problem(await call('POST', '/v1/things/', { principal: admin, body }));
      expect(answer.status).toBe(400);
      expect(Object.keys(answer.errors ?? {})).toEqual([field]);
    }
    const latin1Declared = problem(
      await call('POST', '/v1/things/', {
        principal: admin,
        body: latin1,
        type: 'application/json; charset=iso-8859-1',
      }),
    );
    expect(latin1Declared.status).toBe(415);
    expect(stored).toHaveLength(0);
  });

  it('answers 400 for a body its Content-Encoding does not decode, and stores nothing', async () => {
    for (const encoding of ['gzip', 'deflate', 'br']) {
      const answer = problem(
        await call('POST', '/v1/things/', {
          principal: admin,
          body: '{"name":"a","size":1}',
          headers: { 'content-encoding': encoding },
        }),
      );
      expect(answer.status).toBe(400);
      expect(Object.keys(answer.errors ?? {})).toEqual(['(body)']);
    }
    expect(stored).toHaveLength(0);
    const zipped = await call('POST', '/v1/things/', {
      principal: admin,
      body: gzipSync('{"name":"a","size":1}'),
      headers: { 'content-encoding': 'gzip' },
    });
    expect(zipped.status).toBe(201);
    expect(stored).toEqual([{ name: 'a', size: 1 }]);
  });

  it('answers 400 for a PATCH with no field to change, and stores nothing', async () => {
    const empty = problem(await call('PATCH', '/v1/things/5/', { principal: admin, body: '{}' }));
    expect(empty).toMatchObject({ status: 400, errors: { '(body)': ['send at least one field to change'] } });
    expect(stored).toHaveLength(0);
    const changed = await call('PATCH', '/v1/things/5/', { principal: admin, body: '{"size":2}' });
    expect(changed.status).toBe(200);
    expect(stored).toEqual([{ size: 2 }]);
  });

  it.each(['0x5', '+5', '%205', '5.0', '1e3', '05', '-5', '0', '9007199254740993'])(
    'refuses the id %s with 400 naming path.id, never reading it as a number',
    async (id) => {
      const answer = problem(await call('GET', `/v1/things/${id}/`, { principal: consumer }));
      expect(answer.status).toBe(400);
      expect(Object.keys(answer.errors ?? {})).toEqual(['path.id']);
    },
  );

  it.each(['%ZZ', '%E0%A4%A', '%C0%AF', '5%'])(
    'refuses the malformed percent-encoding %s with 400 naming path.id, on every method of the path',
    async (id) => {
      const read = problem(await call('GET', `/v1/things/${id}/`, { principal: consumer }));
      expect(read.status).toBe(400);
      expect(Object.keys(read.errors ?? {})).toEqual(['path.id']);
      const patch = await call('PATCH', `/v1/things/${id}/`, { principal: admin, body: '{"size":2}' });
      expect(problem(patch).status).toBe(400);
      expect(Object.keys(patch.body.errors ?? {})).toEqual(['path.id']);
      expect(stored).toHaveLength(0);
    },
  );

  it('validates path parameters and maps taxonomy errors to their status', async () => {
    expect(problem(await call('GET', '/v1/things/abc/', { principal: consumer })).errors).toHaveProperty([
      'path.id',
    ]);
    const conflict = problem(await call('GET', '/v1/things/9/', { principal: consumer }));
    expect(conflict).toMatchObject({ status: 409, detail: 'thing 9 is busy' });
  });

  it('hides unexpected errors behind an error id that is also logged', async () => {
    const body = problem(await call('GET', '/v1/things/13/', { principal: consumer }));
    expect(body.status).toBe(500);
    expect(JSON.stringify(body)).not.toContain('hunter2');
    expect(JSON.stringify(body)).not.toMatch(/at .*\.ts/);
    expect(body.error_id).toBeTruthy();
    expect(logs.records().some((line) => line.error_id === body.error_id)).toBe(true);
  });

  it('answers 404 problem+json for unknown paths (trailing slash is part of the path)', async () => {
    expect(problem(await call('GET', '/v1/nothing/')).status).toBe(404);
    expect(problem(await call('GET', '/v1/things/1', { principal: consumer })).status).toBe(404);
  });

  it.each([
    ['TRACE', '/v1/things/1/', 'GET, HEAD, PATCH, OPTIONS'],
    ['PUT', '/v1/things/1/', 'GET, HEAD, PATCH, OPTIONS'],
    ['DELETE', '/v1/things/', 'POST, OPTIONS'],
    ['GET', '/v1/things/', 'POST, OPTIONS'],
  ])(
    'answers %s %s, a method the path does not declare, with 405 problem+json and Allow: %s',
    async (method, path, allow) => {
      // fetch refuses to send TRACE, so the request goes out through node:http.
      const response = await rawRequest(method, path);
      expect(response.status).toBe(405);
      expect(response.headers['allow']).toBe(allow);
      expect(response.headers['content-type']).toContain('application/problem+json');
      expect(JSON.parse(response.text)).toMatchObject({
        status: 405,
        title: 'Method not allowed',
        detail: `${method} is not allowed on ${path}; use ${allow}`,
      });
      expect(stored).toHaveLength(0);
    },
  );

  it('answers OPTIONS on a declared path with 204 and Allow, and 404 for a path nothing declares', async () => {
    const options = await rawRequest('OPTIONS', '/v1/things/1/');
    expect(options.status).toBe(204);
    expect(options.headers['allow']).toBe('GET, HEAD, PATCH, OPTIONS');
    expect((await rawRequest('TRACE', '/v1/nothing/')).status).toBe(404);
    expect((await rawRequest('TRACE', '/v1/things/1')).status).toBe(404);
  });

  it('serves health, readiness with its checks, and metrics labelled by route template', async () => {
    expect((await fetch(`${base}/healthz`)).status).toBe(200);
    const ready = await fetch(`${base}/readyz`);
    expect(ready.status).toBe(503);
    expect(await ready.json()).toMatchObject({
      status: 'not_ready',
      checks: { database: true, broker: false },
    });
    await call('GET', '/v1/things/5/', { principal: consumer });
    const metrics = await (await fetch(`${base}/metrics`)).text();
    expect(metrics).toContain('process_cpu_seconds_total');
    expect(metrics).toMatch(
      /http_request_duration_seconds_count\{[^}]*route="\/v1\/things\/:id\/"[^}]*status_code="200"/,
    );
    expect(metrics).not.toContain('route="/v1/things/5/"');
  });
});
