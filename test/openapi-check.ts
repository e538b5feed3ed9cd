import Ajv2020, { type ValidateFunction } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { rewriteRefs, type JsonSchema, type OpenApiDocument, type OpenApiResponse } from '@pack/http-kit';

/** One request and its answer, as a test saw it. */
export interface Exchange {
  method: string;
  /** The path as called, query string allowed. */
  path: string;
  status: number;
  contentType: string | null;
  /** The parsed JSON body, the text of any other body, undefined when empty. */
  body: unknown;
}

const COMPONENTS_ID = 'urn:pack:openapi:components';
const NO_SUCH_ROUTE: OpenApiResponse = {
  description: 'No such route',
  content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } },
};

/**
 * Checks answers against the published OpenAPI document: the status must be documented for the
 * operation, the media type one of the documented ones, and a JSON body valid against its schema
 * (ajv, JSON Schema 2020-12 as OpenAPI 3.1 uses it). A path the document does not know must be
 * a problem+json 404. Any mismatch throws, so the test that made the call fails.
 */
export class OpenApiCheck {
  private readonly ajv = addFormats(new Ajv2020({ allErrors: true, strict: true }));
  private readonly validators = new Map<JsonSchema, ValidateFunction>();
  private readonly routes: { method: string; template: string; pattern: RegExp }[];

  constructor(readonly document: OpenApiDocument) {
    // Refs point at '#/components/schemas/X' of the document; the components are one schema here.
    const components = rewriteRefs(document.components.schemas, (ref) =>
      ref.replace('#/components/schemas/', `${COMPONENTS_ID}#/$defs/`),
    ) as JsonSchema;
    this.ajv.addSchema({ $id: COMPONENTS_ID, $defs: components });
    // Fewer parameters first: a literal segment beats a template one (`/docs/` before `/docs/{asset}`).
    this.routes = Object.entries(document.paths)
      .flatMap(([template, item]) => Object.keys(item).map((method) => ({ method, template })))
      .map((route) => ({
        ...route,
        pattern: new RegExp(
          `^${route.template.replace(/[.*+?^$()|[\]\\]/g, '\\$&').replace(/\{[^}]+\}/g, '[^/]+')}$`,
        ),
      }))
      .sort((a, b) => a.template.split('{').length - b.template.split('{').length);
  }

  /** Every method and path the document has, as `GET /v1/...`. */
  operations(): string[] {
    return this.routes.map((route) => `${route.method.toUpperCase()} ${route.template}`);
  }

  private validator(schema: JsonSchema): ValidateFunction {
    let validate = this.validators.get(schema);
    if (!validate) {
      const local = rewriteRefs(schema, (ref) =>
        ref.replace('#/components/schemas/', `${COMPONENTS_ID}#/$defs/`),
      ) as JsonSchema;
      validate = this.ajv.compile(local);
      this.validators.set(schema, validate);
    }
    return validate;
  }

  /**
   * Whether the document calls `body` a valid request body of the operation (`POST
   * /v1/catalog/services/`, as operations() names it): what a client generated from it would send.
   */
  takesBody(operation: string, body: unknown): boolean {
    const [method, template] = operation.split(' ') as [string, string];
    const schema =
      this.document.paths[template]?.[method.toLowerCase() as 'post']?.requestBody?.content[
        'application/json'
      ]?.schema;
    if (!schema) throw new Error(`${operation} takes no JSON body in the OpenAPI document`);
    return this.validator(schema)(body);
  }

  /** Compiles every schema of the document: a schema ajv refuses is a broken document. */
  compileAll(): number {
    let count = 0;
    for (const item of Object.values(this.document.paths)) {
      for (const operation of Object.values(item)) {
        const schemas = [
          ...(operation.parameters ?? []).map((parameter) => parameter.schema),
          ...Object.values(operation.requestBody?.content ?? {}).map((media) => media.schema),
          ...Object.values(operation.responses).flatMap((response) =>
            Object.values(response.content ?? {}).map((media) => media.schema),
          ),
        ];
        for (const schema of schemas) {
          if (!schema) continue;
          this.validator(schema);
          count += 1;
        }
      }
    }
    return count;
  }

  private response(exchange: Exchange): OpenApiResponse {
    const path = exchange.path.split('?')[0]!;
    const method = exchange.method.toLowerCase();
    const route = this.routes.find((known) => known.method === method && known.pattern.test(path));
    const where = `${exchange.method} ${path} answered ${exchange.status}`;
    if (!route) {
      // Unknown to the document: only "no such route" is a fitting answer.
      if (exchange.status !== 404)
        throw new Error(`${where}, but the OpenAPI document has no such operation`);
      return NO_SUCH_ROUTE;
    }
    const operation = this.document.paths[route.template]![method as 'get']!;
    const response = operation.responses[String(exchange.status)] ?? operation.responses.default;
    if (!response) {
      const documented = Object.keys(operation.responses).join(', ');
      throw new Error(`${where}, which ${operation.operationId} does not document (it has ${documented})`);
    }
    return response;
  }

  check(exchange: Exchange): void {
    const where = `${exchange.method} ${exchange.path.split('?')[0]} answered ${exchange.status}`;
    const response = this.response(exchange);
    const empty = exchange.body === undefined || exchange.body === '';
    if (!response.content) {
      if (!empty) throw new Error(`${where} with a body, but its documented answer has none`);
      return;
    }
    const mediaType = (exchange.contentType ?? '').split(';')[0]!.trim().toLowerCase();
    const media = response.content[mediaType];
    if (!media)
      throw new Error(
        `${where} as "${mediaType}", documented as ${Object.keys(response.content).join(' or ')}`,
      );
    if (!media.schema) return;
    const validate = this.validator(media.schema);
    if (!validate(exchange.body)) {
      const errors = (validate.errors ?? [])
        .map(
          (error) =>
            `${error.instancePath || '(body)'} ${error.message ?? ''} ${JSON.stringify(error.params)}`,
        )
        .join('; ');
      throw new Error(`${where} with a body that does not match its documented schema: ${errors}`);
    }
  }
}
