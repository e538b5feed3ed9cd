import {
  openApiDocument,
  PROBLEM_DESCRIPTIONS,
  problemResponse,
  rewriteRefs,
  SECURITY_SCHEME,
  type AnyRoute,
  type OpenApiDocument,
} from '@pack/http-kit';
import type { Logger } from '@pack/logging';
import { upstreamFor, type Upstream } from '../domain/routing';

const DESCRIPTION = `The public API of the pack platform, as the gateway serves it. Generated from the route
declarations of the gateway and of every service that answered; \`x-missing-services\` names those
that did not (not deployed, down, or too slow), whose paths are then missing here.

Send \`Authorization: Token <token>\`. Errors are RFC 9457 \`application/problem+json\`.`;

export interface ApiDocumentOptions {
  version: string;
  /** The gateway's own routes (tokens, this document). */
  routes: () => readonly AnyRoute[];
  upstreams: Record<Upstream, string>;
  logger: Logger;
  /** What ends the wait for an upstream's document (default: 2 s passing). */
  timeout?: (upstream: Upstream) => AbortSignal;
  /** How long a merged document is served before it is built again... */
  ttlMs?: number;
  /** ...and how long when a service was missing, so it shows up soon after it starts. */
  missingTtlMs?: number;
}

/**
 * A forwarded operation as the gateway answers it: the gateway asks for a token on everything it
 * forwards and answers for the owning service when that one fails, is down or is slow.
 */
function asForwarded(item: OpenApiDocument['paths'][string]): OpenApiDocument['paths'][string] {
  const forwarded: OpenApiDocument['paths'][string] = {};
  for (const [method, operation] of Object.entries(item) as [
    keyof typeof item,
    NonNullable<typeof item.get>,
  ][]) {
    const responses = { ...operation.responses };
    for (const status of [401, 502, 503, 504] as const)
      responses[status] ??= problemResponse(PROBLEM_DESCRIPTIONS[status]);
    forwarded[method] = { ...operation, security: [{ [SECURITY_SCHEME]: [] }], responses };
  }
  return forwarded;
}

/** Adds one service's document to the merged one, keeping only the paths the gateway forwards to it. */
function addUpstream(merged: OpenApiDocument, upstream: Upstream, document: OpenApiDocument, logger: Logger) {
  // A schema name another service already uses with other content (versions differ during a
  // rolling deploy) is renamed for this service's paths.
  const renamed = new Map<string, string>();
  for (const [name, schema] of Object.entries(document.components.schemas)) {
    const taken = merged.components.schemas[name];
    if (taken && JSON.stringify(taken) !== JSON.stringify(schema)) renamed.set(name, `${upstream}_${name}`);
  }
  const prefix = '#/components/schemas/';
  const rewritten = rewriteRefs(document, (ref) => {
    const target = ref.startsWith(prefix) ? renamed.get(ref.slice(prefix.length)) : undefined;
    return target ? prefix + target : ref;
  }) as OpenApiDocument;
  for (const [name, schema] of Object.entries(rewritten.components.schemas))
    merged.components.schemas[renamed.get(name) ?? name] = schema;
  for (const [path, item] of Object.entries(rewritten.paths)) {
    if (upstreamFor(path) === upstream && !merged.paths[path]) merged.paths[path] = asForwarded(item);
    else
      logger.warn({ upstream, path }, 'left out of the API document: the gateway does not forward it there');
  }
  for (const tag of rewritten.tags)
    if (!merged.tags.some((known) => known.name === tag.name)) merged.tags.push(tag);
}

function isOpenApi31(value: unknown): value is OpenApiDocument {
  const document = value as Partial<OpenApiDocument> | null;
  return (
    typeof document?.openapi === 'string' &&
    document.openapi.startsWith('3.1.') &&
    typeof document.paths === 'object' &&
    typeof document.components?.schemas === 'object' &&
    Array.isArray(document.tags)
  );
}

/**
 * The public document: the gateway's own routes plus each upstream's `/openapi.json`, fetched
 * with a short timeout and cached. A service that does not answer is left out and named, never
 * an error: the reference must work while a service is down or not built yet.
 */
export class ApiDocument {
  private cached?: { document: OpenApiDocument; expires: number };
  private building?: Promise<OpenApiDocument>;

  constructor(private readonly options: ApiDocumentOptions) {}

  async get(): Promise<OpenApiDocument> {
    if (this.cached && this.cached.expires > Date.now()) return this.cached.document;
    this.building ??= this.build().finally(() => {
      this.building = undefined;
    });
    return this.building;
  }

  private async fetchUpstream(upstream: Upstream, url: string): Promise<OpenApiDocument | undefined> {
    try {
      const response = await fetch(new URL('/openapi.json', url), {
        signal: this.options.timeout?.(upstream) ?? AbortSignal.timeout(2_000),
      });
      const body: unknown = response.ok ? await response.json() : undefined;
      if (isOpenApi31(body)) return body;
      this.options.logger.warn(
        { upstream, status: response.status },
        'no OpenAPI 3.1 document from upstream',
      );
    } catch (error) {
      this.options.logger.info({ upstream, err: error }, 'upstream OpenAPI document unavailable');
    }
    return undefined;
  }

  private async build(): Promise<OpenApiDocument> {
    const { options } = this;
    const upstreams = Object.entries(options.upstreams) as [Upstream, string][];
    const fetched = await Promise.all(
      upstreams.map(async ([name, url]) => [name, await this.fetchUpstream(name, url)] as const),
    );
    const merged = openApiDocument(options.routes(), {
      service: 'gateway',
      version: options.version,
      title: 'The pack platform API',
      description: DESCRIPTION,
    });
    const missing: Upstream[] = [];
    for (const [name, document] of fetched) {
      if (document) addUpstream(merged, name, document, options.logger);
      else missing.push(name);
    }
    merged['x-missing-services'] = missing;
    if (missing.length > 0)
      merged.info.description += `\n\nLeft out now, as they did not answer: ${missing.join(', ')}.`;
    const ttl = missing.length > 0 ? (options.missingTtlMs ?? 5_000) : (options.ttlMs ?? 60_000);
    this.cached = { document: merged, expires: Date.now() + ttl };
    return merged;
  }
}
