import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { z } from 'zod';
import { route } from '@pack/http-kit';
import { createLogger } from '@pack/logging';
import { CEILINGS, waitFor } from '@pack/testkit';
import { ApiDocument } from '../src/http/api-document';

/** A service's document as a newer version of a service might publish it. */
const catalogDocument = {
  openapi: '3.1.0',
  info: { title: 'catalog', version: '9' },
  tags: [{ name: 'catalog' }],
  paths: {
    '/v1/catalog/things/': {
      get: {
        operationId: 'getCatalogThings',
        responses: {
          '200': {
            description: 'Things',
            content: { 'application/json': { schema: { $ref: '#/components/schemas/Problem' } } },
          },
        },
      },
    },
    // Owned by another service at the gateway: a user could never reach it through here.
    '/v1/core/tokens/{id}/': { get: { operationId: 'stray', responses: {} } },
  },
  components: { schemas: { Problem: { type: 'object', description: 'not the gateway one' } } },
};

/** One fake upstream per behaviour; counts the requests it got. */
async function upstream(answer: (res: http.ServerResponse) => void) {
  let requests = 0;
  const server = http.createServer((_req, res) => {
    requests += 1;
    answer(res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests: () => requests,
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(resolve));
    },
  };
}

const json =
  (body: unknown, status = 200) =>
  (res: http.ServerResponse) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };

describe('the merged API document', () => {
  let servers: Awaited<ReturnType<typeof upstream>>[];
  let catalog: Awaited<ReturnType<typeof upstream>>;
  let document: ApiDocument;
  /** Ends the wait for the hanging upstream's document: its time-out, as it asks (no clock). */
  let timeOutHanging = () => undefined as void;
  const timeout = (name: string) => {
    // The others answer whatever the machine's load: only a hang reaches their ceiling.
    if (name !== 'settings') return AbortSignal.timeout(CEILINGS.wait);
    const ended = new AbortController();
    timeOutHanging = () => ended.abort(new DOMException('timed out', 'TimeoutError'));
    return ended.signal;
  };

  beforeAll(async () => {
    catalog = await upstream(json(catalogDocument));
    const hanging = await upstream(() => timeOutHanging());
    const failing = await upstream(json({ title: 'boom' }, 500));
    const oldVersion = await upstream(json({ ...catalogDocument, openapi: '3.0.3' }));
    servers = [catalog, hanging, failing, oldVersion];
    document = new ApiDocument({
      version: '1.0.0',
      routes: () => [
        route({
          method: 'get',
          path: '/v1/core/tokens/:id/',
          summary: 'A token',
          access: ['admin'],
          params: z.object({ id: z.coerce.number() }),
          responses: { 200: { description: 'The token', schema: z.object({ id: z.number() }) } },
          handler: () => ({}),
        }),
      ],
      upstreams: {
        catalog: catalog.url,
        settings: hanging.url,
        'llm-gateway': failing.url,
        'pipeline-orchestrator': 'http://127.0.0.1:1',
        'webhook-dispatcher': oldVersion.url,
      },
      logger: createLogger({ service: 'gateway', version: '1', level: 'silent' }),
      timeout,
      ttlMs: 60_000,
      missingTtlMs: 200,
    });
  });
  afterAll(async () => {
    await Promise.all(servers.map((server) => server.close()));
  });

  it('leaves out, and names, services that are slow, failing, absent or not OpenAPI 3.1, within the timeout', async () => {
    // The hanging service never answers: only its time-out lets the document come.
    const merged = await document.get();
    expect(merged['x-missing-services']).toEqual([
      'settings',
      'llm-gateway',
      'pipeline-orchestrator',
      'webhook-dispatcher',
    ]);
    expect(merged.info.description).toContain(
      'Left out now, as they did not answer: settings, llm-gateway, pipeline-orchestrator, webhook-dispatcher.',
    );
    expect(Object.keys(merged.paths).sort()).toEqual(['/v1/catalog/things/', '/v1/core/tokens/{id}/']);
    expect(merged.paths['/v1/core/tokens/{id}/']!.get!.operationId).toBe('getCoreTokensById');
  });

  it('documents forwarded operations as the gateway answers them, keeping each service schema apart', async () => {
    const merged = await document.get();
    const things = merged.paths['/v1/catalog/things/']!.get!;
    expect(things.security).toEqual([{ Token: [] }]);
    expect(Object.keys(things.responses)).toEqual(['200', '401', '502', '503', '504']);
    expect(things.responses['503']!.content).toEqual({
      'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } },
    });
    // The catalog's "Problem" differs from the gateway's: renamed, and its refs follow.
    expect(things.responses['200']!.content!['application/json']!.schema).toEqual({
      $ref: '#/components/schemas/catalog_Problem',
    });
    expect(merged.components.schemas.catalog_Problem).toEqual({
      type: 'object',
      description: 'not the gateway one',
    });
    expect(merged.components.schemas.Problem).toMatchObject({
      required: ['type', 'title', 'status', 'detail'],
    });
    expect(merged.tags.map((tag) => tag.name)).toEqual(['gateway', 'catalog']);
  });

  it('is built once for concurrent readers and fetched again soon while a service is missing', async () => {
    const before = catalog.requests();
    await waitFor(async () => {
      await Promise.all([document.get(), document.get(), document.get()]);
      return catalog.requests() > before;
    });
    expect(catalog.requests()).toBe(before + 1);
  });
});
