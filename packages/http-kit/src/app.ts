import express, {
  type ErrorRequestHandler,
  type Express,
  type NextFunction,
  type Request,
  type RequestHandler,
  type Response,
} from 'express';
import type { z } from 'zod';
import { stringifyExactJson, type Principal } from '@pack/contracts';
import type { Logger } from '@pack/logging';
import type { Metrics } from '@pack/metrics';
import {
  type AppError,
  ForbiddenError,
  isBareBadRequest,
  MethodNotAllowedError,
  NotFoundError,
  UnauthorizedError,
  ValidationError,
} from './errors';
import { errorHandler } from './error-response';
import { verifyPrincipal } from '@pack/internal-auth';
import { jsonBody, refuseEmptyPatch } from './body';
import { zodFieldErrors } from './problem';
import { undecodableParams } from './params';
import { openApiDocument, type OpenApiDocument } from './openapi';
import { opsEndpoints, type ReadinessCheck } from './ops';
import type { AnyRoute } from './route';
import { observe, requestContext } from './request-observe';

export { observeRequest, requestIds } from './request-observe';

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    interface Request {
      principal?: Principal | null;
      requestId?: string;
    }
  }
}

export interface HttpAppOptions {
  service: string;
  /** The service version, shown in its OpenAPI document. */
  version?: string;
  logger: Logger;
  metrics: Metrics;
  routes: readonly AnyRoute[];
  /** Shared secret that verifies the principal headers set by the gateway. */
  internalSecret: string;
  bodyLimitBytes: number;
  readiness: ReadinessCheck;
  /**
   * Whether this port serves /metrics (default true). The gateway's public port does not: its
   * metrics are on the internal metrics listener only (docs/decisions/0020).
   */
  serveMetrics?: boolean;
  /** How a request's principal is found; by default, the gateway's signed headers. */
  authenticate?: (req: Request) => Promise<Principal | null>;
  /** Check every response body against its declared schema (on in tests, to catch drift). */
  validateResponses?: boolean;
  /** Maps errors of other layers (the database) onto the taxonomy. */
  mapError?: (error: unknown) => AppError | undefined;
}

function parsePart<S extends z.ZodType | undefined>(schema: S, value: unknown, where: string): unknown {
  if (!schema) return undefined;
  const result = schema.safeParse(value);
  if (!result.success) {
    throw new ValidationError(`the request ${where} is invalid`, {
      errors: zodFieldErrors(result.error, where === 'body' ? undefined : where),
    });
  }
  return result.data;
}

/**
 * Express percent-decodes path parameters while it matches routes and fails with a URIError
 * marked 400 on a malformed one, which would answer 500: a 400 naming the parameter instead.
 */
function undecodablePath(routes: readonly AnyRoute[]): ErrorRequestHandler {
  return (error: unknown, req, _res, next) => {
    if (!(error instanceof URIError) || !isBareBadRequest(error)) return next(error);
    const names = undecodableParams(routes, req.path);
    const message = 'is not valid percent-encoded UTF-8';
    next(
      new ValidationError('the request path is invalid', {
        errors: Object.fromEntries(
          (names.length > 0 ? names.map((name) => `path.${name}`) : ['path']).map((key) => [key, [message]]),
        ),
      }),
    );
  };
}

/** res.json, writing exact numbers (users' JSON, @pack/contracts exact-json.ts) as they were sent. */
function sendJson(res: Response, body: unknown): void {
  if (!res.get('Content-Type')) res.type('application/json');
  res.send(stringifyExactJson(body));
}

function authorize(route: AnyRoute, principal: Principal | null): void {
  if (route.access === 'public') return;
  if (!principal) throw new UnauthorizedError('Send an API token as "Authorization: Token <token>".');
  if (route.access !== 'authenticated' && !route.access.includes(principal.role)) {
    throw new ForbiddenError(`this action needs one of the roles: ${route.access.join(', ')}`);
  }
}

function mount(app: Express, route: AnyRoute, options: HttpAppOptions): void {
  const authenticate =
    options.authenticate ??
    ((req: Request) =>
      Promise.resolve(verifyPrincipal(options.internalSecret, req.method, req.originalUrl, req.headers)));
  const handler: RequestHandler = async (req, res) => {
    const principal = await authenticate(req);
    req.principal = principal;
    authorize(route, principal);
    const params = parsePart(route.params, req.params, 'path');
    const query = parsePart(route.query, req.query, 'query');
    let body: unknown;
    if (route.body) {
      // A body schema that accepts undefined (`.optional()`) makes the body optional.
      if (req.body === undefined && !route.body.safeParse(undefined).success)
        throw new ValidationError('a JSON request body is required', { errors: { '(body)': ['required'] } });
      refuseEmptyPatch(route, req.body);
      body = parsePart(route.body, req.body, 'body');
    }
    const reply = await route.handler({ params, query, body, principal, req, res, log: options.logger });
    if (res.headersSent) return;
    const status = reply.status ?? 200;
    if (options.validateResponses) {
      const declared = route.responses[status];
      if (!declared)
        throw new Error(
          `${route.method.toUpperCase()} ${route.path} answered ${status}, which it does not declare`,
        );
      const checked = declared.schema?.safeParse(reply.body);
      if (checked && !checked.success) {
        throw new Error(
          `${route.method.toUpperCase()} ${route.path} ${status} body does not match its schema: ${checked.error.message}`,
        );
      }
    }
    for (const [name, value] of Object.entries(reply.headers ?? {})) res.setHeader(name, value);
    if (reply.body === undefined) res.status(status).end();
    else sendJson(res.status(status), reply.body);
  };
  const stack: RequestHandler[] = route.body
    ? jsonBody(options.bodyLimitBytes, { exactNumbers: route.exactNumbers === true })
    : [];
  app[route.method](route.path, ...stack, handler);
}

/**
 * A declared path asked with a method it does not declare (TRACE, PUT on a read-only path): 405
 * problem+json with `Allow` naming the declared methods (RFC 9110 15.5.6), not a 404 that would
 * say the path does not exist. OPTIONS on a declared path answers 204 with the same `Allow`.
 * Mounted after the routes, so a declared method never gets here; HEAD is answered by every GET
 * route.
 */
function refuseUndeclaredMethods(app: Express, routes: readonly AnyRoute[]): void {
  const methods = new Map<string, Set<string>>();
  for (const route of routes) {
    const declared = methods.get(route.path) ?? new Set<string>();
    declared.add(route.method.toUpperCase());
    if (route.method === 'get') declared.add('HEAD');
    methods.set(route.path, declared);
  }
  for (const [path, declared] of methods) {
    const allow = [...declared, 'OPTIONS'].join(', ');
    app.all(path, (req, res, next) => {
      if (req.method === 'OPTIONS') {
        res.setHeader('allow', allow);
        res.status(204).end();
        return;
      }
      next(
        new MethodNotAllowedError(`${req.method} is not allowed on ${req.path}; use ${allow}`, {
          headers: { allow },
        }),
      );
    });
  }
}

/** The express app every service uses: context, metrics, health, declared routes, errors. */
export function createHttpApp(options: HttpAppOptions): Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('strict routing', true);
  app.set('case sensitive routing', true);
  app.set('etag', false);
  app.set('query parser', 'simple');

  app.use(requestContext());
  app.use(observe(options.metrics, options.logger));

  const ops = opsEndpoints({
    service: options.service,
    metrics: options.metrics,
    readiness: options.readiness,
    serveMetrics: options.serveMetrics ?? true,
  });
  app.use((req, res, next) => {
    if (!ops(req, res)) next();
  });

  // Like /healthz, outside /v1: the gateway fetches it to build the public document at /v1/openapi.json.
  let document: OpenApiDocument | undefined;
  app.get('/openapi.json', (_req, res) => {
    document ??= openApiDocument(options.routes, {
      service: options.service,
      version: options.version ?? '0.0.0',
    });
    res.json(document);
  });

  for (const route of options.routes) mount(app, route, options);
  refuseUndeclaredMethods(app, options.routes);

  app.use((req: Request, _res: Response, next: NextFunction) => {
    next(new NotFoundError(`no route for ${req.method} ${req.path}`));
  });
  app.use(undecodablePath(options.routes));
  app.use(errorHandler(options.logger, options.mapError));
  return app;
}
