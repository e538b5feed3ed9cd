import { z } from 'zod';
import { ROLES } from '@pack/contracts';
import { documentedInputs } from './params';
import { PROBLEM_CONTENT_TYPE, problemSchema } from './problem';
import type { Access, AnyRoute, HttpMethod, ResponseSpec } from './route';

/**
 * The OpenAPI 3.1 document of a service, generated from its route declarations: the zod schemas
 * that validate requests and responses are converted by zod's own `z.toJSONSchema` (JSON Schema
 * 2020-12, the dialect of OpenAPI 3.1), requests as their input, responses as their output.
 * Nothing is kept by hand, so a route cannot land without its documentation.
 */

export type JsonSchema = { [keyword: string]: unknown };

export interface OpenApiParameter {
  name: string;
  in: 'path' | 'query' | 'cookie';
  required: boolean;
  description?: string;
  schema: JsonSchema;
}

export interface OpenApiResponse {
  description: string;
  headers?: Record<string, { description: string; schema: JsonSchema }>;
  content?: Record<string, { schema?: JsonSchema }>;
}

export interface OpenApiOperation {
  operationId: string;
  summary: string;
  description: string;
  tags: string[];
  security: Record<string, string[]>[];
  'x-roles': string[];
  parameters?: OpenApiParameter[];
  requestBody?: { required: boolean; content: Record<string, { schema: JsonSchema }> };
  responses: Record<string, OpenApiResponse>;
}

export interface OpenApiDocument {
  openapi: string;
  info: { title: string; version: string; description?: string };
  tags: { name: string; description?: string }[];
  paths: Record<string, Partial<Record<HttpMethod, OpenApiOperation>>>;
  components: {
    schemas: Record<string, JsonSchema>;
    securitySchemes: Record<string, JsonSchema>;
  };
  [extension: `x-${string}`]: unknown;
}

export const OPENAPI_VERSION = '3.1.0';
export const SECURITY_SCHEME = 'Token';
const PROBLEM_COMPONENT = 'Problem';

/** The token scheme of the platform, the same in every document. */
export const tokenSecurityScheme: JsonSchema = {
  type: 'apiKey',
  in: 'header',
  name: 'Authorization',
  description:
    'An API token sent as `Authorization: Token <token>` (admins create them at /v1/core/tokens/).',
};

/** Problem answers the HTTP kit gives on its own, documented on every route they can happen on. */
export const PROBLEM_DESCRIPTIONS = {
  400: 'Invalid request; `errors` names each field',
  401: 'No token, or an unknown or revoked one',
  403: 'The caller role may not do this',
  413: 'The body is larger than the limit',
  415: 'The body is not JSON',
  431: 'The request line and headers together are larger than the server accepts',
  500: 'Unexpected error; `error_id` finds it in the logs',
  502: 'The owning service failed to answer',
  503: 'The owning service is unavailable',
  504: 'The owning service did not answer in time',
} as const;

/** An express path as an OpenAPI path: `/v1/services/:id/` -> `/v1/services/{id}/`. */
export function openApiPath(expressPath: string): string {
  return expressPath.replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, '{$1}');
}

/**
 * `delete /v1/core/tokens/:id/` -> `deleteCoreTokensById`: stable, readable, unique per method and
 * path. A path that differs from another only by its missing trailing slash (`/v1/docs`, which
 * redirects to `/v1/docs/`) ends in `NoSlash`, as OpenAPI wants every operationId unique.
 */
export function operationId(method: HttpMethod, expressPath: string): string {
  const pascal = (word: string) =>
    word
      .split(/[^A-Za-z0-9]+/)
      .filter(Boolean)
      .map((part) => part[0]!.toUpperCase() + part.slice(1))
      .join('');
  const segments = expressPath
    .split('/')
    .filter((segment) => segment && segment !== 'v1')
    .map((segment) => (segment.startsWith(':') ? `By${pascal(segment.slice(1))}` : pascal(segment)));
  const last = expressPath.split('/').pop() ?? '';
  const bare = /^[A-Za-z0-9_-]+$/.test(last);
  return method + segments.join('') + (bare ? 'NoSlash' : '');
}

export function problemResponse(description: string): OpenApiResponse {
  return {
    description,
    content: { [PROBLEM_CONTENT_TYPE]: { schema: { $ref: `#/components/schemas/${PROBLEM_COMPONENT}` } } },
  };
}

/** A copy of a JSON value with every `$ref` passed through `rewrite`. */
export function rewriteRefs(value: unknown, rewrite: (ref: string) => string): unknown {
  if (Array.isArray(value)) return value.map((item) => rewriteRefs(item, rewrite));
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, inner]) => [
      key,
      key === '$ref' && typeof inner === 'string' ? rewrite(inner) : rewriteRefs(inner, rewrite),
    ]),
  );
}

/** A cookie value: one or more cookie-octets (RFC 6265 4.1.1). */
const COOKIE_VALUE: JsonSchema = { type: 'string', minLength: 1, pattern: '^[!#-+\\--:<-\\[\\]-~]+$' };

/** What a documented input keeps of zod's own conversion (documentInput). */
const KEPT_KEYWORDS = new Set(['description', 'default', 'title', 'examples']);

/** Converts zod schemas, moving recursive ones into components (their `#` refs would mean the document). */
class SchemaConverter {
  readonly components: Record<string, JsonSchema> = {};

  convert(schema: z.ZodType, io: 'input' | 'output', name: string): JsonSchema {
    if (schema === problemSchema) return { $ref: `#/components/schemas/${PROBLEM_COMPONENT}` };
    return this.inline(schema, io, name);
  }

  inline(schema: z.ZodType, io: 'input' | 'output', name: string): JsonSchema {
    const {
      $schema: _dialect,
      $defs,
      ...root
    } = z.toJSONSchema(schema, {
      target: 'draft-2020-12',
      io,
      // A transform's output or a date has no JSON Schema: documented as any value, never a crash.
      unrepresentable: 'any',
      override: ({ zodSchema, jsonSchema }) => {
        const documented = io === 'input' ? documentedInputs.get(zodSchema) : undefined;
        if (!documented) return;
        for (const keyword of Object.keys(jsonSchema))
          if (!KEPT_KEYWORDS.has(keyword)) delete jsonSchema[keyword as keyof typeof jsonSchema];
        Object.assign(jsonSchema, documented);
      },
    }) as JsonSchema & { $defs?: Record<string, JsonSchema> };
    const refs = JSON.stringify(root) + JSON.stringify($defs ?? {});
    if (!refs.includes('"$ref":"#')) return root;
    const rewrite = (ref: string) =>
      ref === '#'
        ? `#/components/schemas/${name}`
        : ref.replace(/^#\/\$defs\//, `#/components/schemas/${name}_`);
    this.components[name] = rewriteRefs(root, rewrite) as JsonSchema;
    for (const [key, def] of Object.entries($defs ?? {}))
      this.components[`${name}_${key}`] = rewriteRefs(def, rewrite) as JsonSchema;
    return { $ref: `#/components/schemas/${name}` };
  }

  parameters(schema: z.ZodType | undefined, where: 'path' | 'query', name: string): OpenApiParameter[] {
    if (!schema) return [];
    const converted = this.convert(schema, 'input', name);
    const properties = converted.properties as Record<string, JsonSchema> | undefined;
    if (converted.type !== 'object' || !properties)
      throw new Error(`${name}: ${where} parameters must be declared as a zod object`);
    const required = new Set((converted.required as string[] | undefined) ?? []);
    return Object.entries(properties).map(([key, { description, ...property }]) => ({
      name: key,
      in: where,
      required: where === 'path' || required.has(key),
      ...(typeof description === 'string' ? { description } : {}),
      schema: property,
    }));
  }
}

function accessOf(access: Access): { roles: string[]; text: string } {
  if (access === 'public') return { roles: [], text: 'Public: no token needed.' };
  if (access === 'authenticated') return { roles: [...ROLES], text: 'Any signed-in user.' };
  return { roles: [...access], text: `Roles: ${access.join(', ')}.` };
}

function declaredResponse(spec: ResponseSpec, converter: SchemaConverter, name: string): OpenApiResponse {
  const content: Record<string, { schema?: JsonSchema }> = {};
  if (spec.schema) {
    const mediaType = spec.schema === problemSchema ? PROBLEM_CONTENT_TYPE : 'application/json';
    content[mediaType] = { schema: converter.convert(spec.schema, 'output', name) };
  }
  for (const mediaType of spec.mediaTypes ?? []) content[mediaType] ??= {};
  const headers = Object.entries(spec.headers ?? {}).map(
    ([header, description]) => [header, { description, schema: { type: 'string' } }] as const,
  );
  return {
    description: spec.description,
    ...(headers.length > 0 ? { headers: Object.fromEntries(headers) } : {}),
    ...(Object.keys(content).length > 0 ? { content } : {}),
  };
}

/** The JSON body's schema; a PATCH object (or union of objects) needs a field to change (refuseEmptyPatch). */
function bodySchema(route: AnyRoute, converter: SchemaConverter, id: string): JsonSchema {
  const schema = converter.convert(route.body!, 'input', `${id}_body`);
  const object = schema.type === 'object' || Array.isArray(schema.oneOf) || Array.isArray(schema.anyOf);
  return route.method === 'patch' && object ? { type: 'object', ...schema, minProperties: 1 } : schema;
}

function operation(route: AnyRoute, service: string, converter: SchemaConverter): OpenApiOperation {
  const id = operationId(route.method, route.path);
  const access = accessOf(route.access);
  const parameters = [
    ...converter.parameters(route.params, 'path', `${id}_path`),
    ...converter.parameters(route.query, 'query', `${id}_query`),
  ];
  // OpenAPI requires every path template to be described; one without a schema takes any text.
  for (const [, name] of route.path.matchAll(/:([A-Za-z_][A-Za-z0-9_]*)/g))
    if (!parameters.some((parameter) => parameter.in === 'path' && parameter.name === name))
      parameters.push({ name: name!, in: 'path', required: true, schema: { type: 'string' } });
  for (const [name, description] of Object.entries(route.cookies ?? {}))
    parameters.push({ name, in: 'cookie', required: true, description, schema: COOKIE_VALUE });
  const responses: Record<string, OpenApiResponse> = {};
  for (const [status, spec] of Object.entries(route.responses))
    responses[status] = declaredResponse(spec, converter, `${id}_${status}`);
  const implied: (keyof typeof PROBLEM_DESCRIPTIONS)[] = [
    ...(route.params || route.query || route.body || route.cookies ? [400 as const] : []),
    ...(route.access !== 'public' ? [401 as const] : []),
    ...(Array.isArray(route.access) ? [403 as const] : []),
    ...(route.body ? [413 as const, 415 as const] : []),
    431,
    500,
  ];
  for (const status of implied) responses[status] ??= problemResponse(PROBLEM_DESCRIPTIONS[status]);
  return {
    operationId: id,
    summary: route.summary,
    description: `${route.summary}.\n\n${access.text}`,
    tags: [service],
    security: route.access === 'public' ? [] : [{ [SECURITY_SCHEME]: [] }],
    'x-roles': access.roles,
    ...(parameters.length > 0 ? { parameters } : {}),
    ...(route.body
      ? {
          requestBody: {
            required: !route.body.safeParse(undefined).success,
            content: { 'application/json': { schema: bodySchema(route, converter, id) } },
          },
        }
      : {}),
    responses,
  };
}

export interface OpenApiOptions {
  service: string;
  version: string;
  title?: string;
  description?: string;
}

/** The document of one service's declared routes. */
export function openApiDocument(routes: readonly AnyRoute[], options: OpenApiOptions): OpenApiDocument {
  const converter = new SchemaConverter();
  const paths: OpenApiDocument['paths'] = {};
  for (const route of routes) {
    const path = openApiPath(route.path);
    const item = (paths[path] ??= {});
    if (item[route.method]) throw new Error(`${route.method} ${route.path} is declared twice`);
    item[route.method] = operation(route, options.service, converter);
  }
  return {
    openapi: OPENAPI_VERSION,
    info: {
      title: options.title ?? `The pack platform: ${options.service}`,
      version: options.version,
      ...(options.description ? { description: options.description } : {}),
    },
    tags: [{ name: options.service }],
    paths,
    components: {
      schemas: {
        [PROBLEM_COMPONENT]: converter.inline(problemSchema, 'output', PROBLEM_COMPONENT),
        ...converter.components,
      },
      securitySchemes: { [SECURITY_SCHEME]: tokenSecurityScheme },
    },
  };
}
