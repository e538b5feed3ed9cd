import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { z } from 'zod';
import { createLogger } from '@pack/logging';
import { createMetrics } from '@pack/metrics';
import { openApiProblems, TEST_INTERNAL_SECRET } from '@pack/testkit';
import { createHttpApp, idParams, listQuerySchema, openApiDocument, problemSchema, route } from '../src';

interface Tree {
  name: string;
  children: Tree[];
}
const tree: z.ZodType<Tree> = z.lazy(() => z.object({ name: z.string(), children: z.array(tree) }));
const problem = (description: string) => ({ description, schema: problemSchema });
const noop = () => ({});

const routes = [
  route({
    method: 'post',
    path: '/v1/shop/things/',
    summary: 'Create a thing',
    access: ['admin', 'service_owner'],
    body: z.strictObject({
      name: z.string().min(1).describe('What the thing is called'),
      size: z.number().int().max(10).default(1),
    }),
    responses: {
      201: { description: 'Created', schema: z.object({ name: z.string(), size: z.number().int() }) },
      409: problem('The name is taken'),
    },
    handler: noop,
  }),
  route({
    method: 'get',
    path: '/v1/shop/things/:thing_id/parts/',
    summary: 'List the parts of a thing',
    access: 'authenticated',
    params: z.object({ thing_id: z.coerce.number().int().positive() }),
    query: z.object({
      limit: z.coerce.number().int().min(1).max(50).default(20),
      tags: z
        .string()
        .optional()
        .transform((raw) => raw?.split(',')),
    }),
    responses: {
      200: {
        description: 'The parts',
        schema: z.array(tree),
        headers: { 'x-total': 'How many parts there are' },
      },
    },
    handler: noop,
  }),
  route({
    method: 'delete',
    path: '/v1/shop/things/:thing_id/',
    summary: 'Delete a thing',
    access: ['admin'],
    params: z.object({ thing_id: z.coerce.number().int().positive() }),
    responses: { 204: { description: 'Deleted' } },
    handler: noop,
  }),
  route({
    method: 'get',
    path: '/v1/shop/things/:thing_id/photo/:photo',
    summary: 'A photo of a thing',
    access: 'authenticated',
    params: z.object({ thing_id: z.coerce.number().int().positive() }),
    responses: { 200: { description: 'The photo', mediaTypes: ['image/png'] } },
    handler: noop,
  }),
  route({
    method: 'get',
    path: '/v1/shop/',
    summary: 'The shop front',
    access: 'public',
    responses: { 200: { description: 'A page', mediaTypes: ['text/html'] } },
    handler: noop,
  }),
];

const document = openApiDocument(routes, { service: 'shop', version: '1.2.3' });
const problemContent = {
  'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } },
};

describe('the OpenAPI document of declared routes', () => {
  it('is valid OpenAPI 3.1', async () => {
    expect(await openApiProblems(document)).toEqual({ version: '3.1', errors: [] });
  });

  it('has every route under its OpenAPI path with an operation id and the service tag', () => {
    expect(document.openapi).toBe('3.1.0');
    expect(document.info).toMatchObject({ version: '1.2.3' });
    const operations = Object.entries(document.paths).flatMap(([path, item]) =>
      Object.entries(item).map(([method, op]) => [method, path, op.operationId, op.tags]),
    );
    expect(operations).toEqual([
      ['post', '/v1/shop/things/', 'postShopThings', ['shop']],
      ['get', '/v1/shop/things/{thing_id}/parts/', 'getShopThingsByThingIdParts', ['shop']],
      ['delete', '/v1/shop/things/{thing_id}/', 'deleteShopThingsByThingId', ['shop']],
      ['get', '/v1/shop/things/{thing_id}/photo/{photo}', 'getShopThingsByThingIdPhotoByPhoto', ['shop']],
      ['get', '/v1/shop/', 'getShop', ['shop']],
    ]);
  });

  it('keeps operation ids unique when two paths differ only by the trailing slash (a redirect)', () => {
    const both = openApiDocument(
      ['/v1/shop', '/v1/shop/'].map((path) =>
        route({ method: 'get', path, summary: path, access: 'public', responses: {}, handler: noop }),
      ),
      { service: 'shop', version: '1' },
    );
    expect([both.paths['/v1/shop']!.get!.operationId, both.paths['/v1/shop/']!.get!.operationId]).toEqual([
      'getShopNoSlash',
      'getShop',
    ]);
  });

  it('documents request bodies as the input the schema accepts and responses as its output', () => {
    const create = document.paths['/v1/shop/things/']!.post!;
    expect(create.requestBody).toEqual({
      required: true,
      content: {
        'application/json': {
          schema: {
            type: 'object',
            properties: {
              name: { type: 'string', minLength: 1, description: 'What the thing is called' },
              size: { type: 'integer', maximum: 10, default: 1, minimum: expect.any(Number) },
            },
            // size has a default: a caller may leave it out.
            required: ['name'],
            additionalProperties: false,
          },
        },
      },
    });
    expect(create.responses['201']!.content!['application/json']!.schema).toMatchObject({
      required: ['name', 'size'],
    });
  });

  it('documents path and query parameters, a transformed one by what the caller sends', () => {
    expect(document.paths['/v1/shop/things/{thing_id}/parts/']!.get!.parameters).toEqual([
      { name: 'thing_id', in: 'path', required: true, schema: expect.objectContaining({ type: 'integer' }) },
      {
        name: 'limit',
        in: 'query',
        required: false,
        schema: expect.objectContaining({ type: 'integer', default: 20, maximum: 50 }),
      },
      { name: 'tags', in: 'query', required: false, schema: { type: 'string' } },
    ]);
    // A path segment the params schema leaves out is still described.
    expect(document.paths['/v1/shop/things/{thing_id}/photo/{photo}']!.get!.parameters).toEqual([
      { name: 'thing_id', in: 'path', required: true, schema: expect.objectContaining({ type: 'integer' }) },
      { name: 'photo', in: 'path', required: true, schema: { type: 'string' } },
    ]);
  });

  it('documents a resource id and the page parameters as the integers, with the bounds, the server takes', () => {
    const listed = openApiDocument(
      [
        route({
          method: 'get',
          path: '/v1/shop/things/:id/parts/',
          summary: 'List the parts of a thing',
          access: 'authenticated',
          params: idParams,
          query: listQuerySchema,
          responses: { 200: { description: 'Parts' } },
          handler: noop,
        }),
      ],
      { service: 'shop', version: '1' },
    );
    expect(listed.paths['/v1/shop/things/{id}/parts/']!.get!.parameters).toEqual([
      {
        name: 'id',
        in: 'path',
        required: true,
        schema: { type: 'integer', minimum: 1, maximum: 9007199254740991 },
      },
      {
        name: 'limit',
        in: 'query',
        required: false,
        description: 'How many results a page holds',
        schema: { type: 'integer', minimum: 1, maximum: 500 },
      },
      {
        name: 'offset',
        in: 'query',
        required: false,
        description: expect.stringContaining('a page costs its depth'),
        schema: { type: 'integer', minimum: 0, maximum: 9007199254740991 },
      },
      {
        name: 'after',
        in: 'query',
        required: false,
        description: expect.stringContaining('the key of the last item seen'),
        schema: { type: 'string', pattern: '^(0|[1-9][0-9]{0,15})$', maxLength: 400 },
      },
    ]);
  });

  it('says a PATCH body needs a field, and documents the cookies a route needs', () => {
    const declared = openApiDocument(
      [
        route({
          method: 'patch',
          path: '/v1/shop/things/:id/',
          summary: 'Change a thing',
          access: 'authenticated',
          params: idParams,
          body: z.strictObject({ name: z.string().optional() }),
          responses: { 200: { description: 'Changed' } },
          handler: noop,
        }),
        route({
          method: 'get',
          path: '/v1/shop/back/',
          summary: 'Come back from the till',
          access: 'public',
          cookies: { till: 'The till session' },
          responses: { 200: { description: 'Back' } },
          handler: noop,
        }),
      ],
      { service: 'shop', version: '1' },
    );
    expect(
      declared.paths['/v1/shop/things/{id}/']!.patch!.requestBody!.content['application/json']!.schema,
    ).toEqual({
      type: 'object',
      properties: { name: { type: 'string' } },
      additionalProperties: false,
      minProperties: 1,
    });
    const back = declared.paths['/v1/shop/back/']!.get!;
    expect(back.parameters).toEqual([
      {
        name: 'till',
        in: 'cookie',
        required: true,
        description: 'The till session',
        schema: { type: 'string', minLength: 1, pattern: '^[!#-+\\--:<-\\[\\]-~]+$' },
      },
    ]);
    expect(Object.keys(back.responses)).toEqual(['200', '400', '431', '500']);
  });

  it('gives error answers as problem+json: declared ones and those the HTTP kit gives by itself', () => {
    const statuses = (path: string, method: 'get' | 'post' | 'delete') =>
      Object.keys(document.paths[path]![method]!.responses);
    // A body can be invalid, too large or not JSON; a role list can refuse; the request line and
    // headers can be too long; anything can fail.
    expect(statuses('/v1/shop/things/', 'post')).toEqual([
      '201',
      '400',
      '401',
      '403',
      '409',
      '413',
      '415',
      '431',
      '500',
    ]);
    expect(statuses('/v1/shop/things/{thing_id}/parts/', 'get')).toEqual(['200', '400', '401', '431', '500']);
    expect(statuses('/v1/shop/', 'get')).toEqual(['200', '431', '500']);
    const create = document.paths['/v1/shop/things/']!.post!;
    for (const status of ['400', '401', '403', '409', '413', '415', '431', '500'])
      expect(create.responses[status]!.content).toEqual(problemContent);
    expect(document.paths['/v1/shop/things/{thing_id}/parts/']!.get!.responses['200']!.headers).toEqual({
      'x-total': { description: 'How many parts there are', schema: { type: 'string' } },
    });
    expect(document.paths['/v1/shop/things/{thing_id}/']!.delete!.responses['204']).toEqual({
      description: 'Deleted',
    });
    expect(document.paths['/v1/shop/']!.get!.responses['200']).toEqual({
      description: 'A page',
      content: { 'text/html': {} },
    });
    expect(document.components.schemas.Problem).toMatchObject({
      type: 'object',
      required: ['type', 'title', 'status', 'detail'],
    });
  });

  it('asks for the Token scheme except on public routes, and names the roles allowed', () => {
    expect(document.components.securitySchemes).toEqual({
      Token: {
        type: 'apiKey',
        in: 'header',
        name: 'Authorization',
        description: expect.stringContaining('Authorization: Token <token>'),
      },
    });
    const create = document.paths['/v1/shop/things/']!.post!;
    expect(create.security).toEqual([{ Token: [] }]);
    expect(create['x-roles']).toEqual(['admin', 'service_owner']);
    expect(create.description).toContain('Roles: admin, service_owner.');
    const parts = document.paths['/v1/shop/things/{thing_id}/parts/']!.get!;
    expect(parts['x-roles']).toEqual(['admin', 'service_owner', 'consumer']);
    const front = document.paths['/v1/shop/']!.get!;
    expect(front.security).toEqual([]);
    expect(front['x-roles']).toEqual([]);
  });

  it('moves a recursive schema into components, where its references resolve', () => {
    const schema =
      document.paths['/v1/shop/things/{thing_id}/parts/']!.get!.responses['200']!.content![
        'application/json'
      ]!.schema!;
    const name = String(schema.$ref).replace('#/components/schemas/', '');
    const component = document.components.schemas[name]!;
    expect(component.type).toBe('array');
    const refs = JSON.stringify(component).match(/"\$ref":"[^"]+"/g) ?? [];
    expect(refs.length).toBeGreaterThan(0);
    for (const ref of refs) {
      const target = ref.slice('"$ref":"#/components/schemas/'.length, -1);
      expect(document.components.schemas).toHaveProperty([target]);
    }
  });
});

describe('a service', () => {
  let server: Server;
  afterAll(async () => {
    await new Promise((resolve) => server?.close(resolve));
  });

  it('serves its own document at /openapi.json, without a token', async () => {
    const app = createHttpApp({
      service: 'shop',
      version: '1.2.3',
      logger: createLogger({ service: 'shop', version: '1.2.3', level: 'silent' }),
      metrics: createMetrics('shop'),
      routes,
      internalSecret: TEST_INTERNAL_SECRET,
      bodyLimitBytes: 2048,
      readiness: () => Promise.resolve({}),
    });
    server = await new Promise((resolve) => {
      const listening = app.listen(0, '127.0.0.1', () => resolve(listening));
    });
    const response = await fetch(`http://127.0.0.1:${(server.address() as AddressInfo).port}/openapi.json`);
    expect(response.status).toBe(200);
    const served = (await response.json()) as typeof document;
    expect(served.info.version).toBe('1.2.3');
    expect(Object.keys(served.paths)).toEqual([
      '/v1/shop/things/',
      '/v1/shop/things/{thing_id}/parts/',
      '/v1/shop/things/{thing_id}/',
      '/v1/shop/things/{thing_id}/photo/{photo}',
      '/v1/shop/',
    ]);
  });
});
