import { randomUUID } from 'node:crypto';
import express, { type ErrorRequestHandler, type Express, type NextFunction, type Request, type RequestHandler, type Response } from 'express';
import type { z } from 'zod';
import type { Principal } from '@pack/contracts';
import { runWithContext, type Logger } from '@pack/logging';
import type { Metrics } from '@pack/metrics';
import {
  AppError,
  ForbiddenError,
  NotFoundError,
  PayloadTooLargeError,
  UnauthorizedError,
  UnsupportedMediaTypeError,
  ValidationError,
  BadRequestError,
} from './errors';
import { verifyPrincipal } from './internal-auth';
import { PROBLEM_CONTENT_TYPE, problemType, zodFieldErrors, type Problem } from './problem';
import type { AnyRoute } from './route';

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    interface Request {
      principal?: Principal | null;
      requestId?: string;
    }
  }
}

export type ReadinessCheck = () => Promise<Record<string, boolean>>;

export interface HttpAppOptions {
  service: string;
  logger: Logger;
  metrics: Metrics;
  routes: readonly AnyRoute[];
  /** Shared secret that verifies the principal headers set by the gateway. */
  internalSecret: string;
  bodyLimitBytes: number;
  readiness: ReadinessCheck;
  /** How a request's principal is found; by default, the gateway's signed headers. */
  authenticate?: (req: Request) => Promise<Principal | null>;
  /** Mounted after the declared routes and before the 404 handler (the gateway's proxy). */
  fallback?: RequestHandler;
  /** Check every response body against its declared schema (on in tests, to catch drift). */
  validateResponses?: boolean;
  /** Maps errors of other layers (the database) onto the taxonomy. */
  mapError?: (error: unknown) => AppError | undefined;
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

function requestContext(): RequestHandler {
  return (req, res, next) => {
    const given = req.get('x-request-id');
    const requestId = given && REQUEST_ID.test(given) ? given : randomUUID();
    const correlation = req.get('x-correlation-id');
    req.requestId = requestId;
    res.setHeader('x-request-id', requestId);
    runWithContext({ requestId, correlationId: correlation && REQUEST_ID.test(correlation) ? correlation : requestId }, next);
  };
}

function observe(metrics: Metrics, logger: Logger): RequestHandler {
  return (req, res, next) => {
    const start = process.hrtime.bigint();
    res.on('finish', () => {
      const seconds = Number(process.hrtime.bigint() - start) / 1e9;
      const route = (req.route as { path?: string } | undefined)?.path ?? 'unmatched';
      metrics.httpDuration.observe({ method: req.method, route, status_code: String(res.statusCode) }, seconds);
      if (req.path === '/healthz' || req.path === '/readyz' || req.path === '/metrics') return;
      logger.info(
        { method: req.method, route, path: req.path, status: res.statusCode, duration_ms: Math.round(seconds * 1e4) / 10 },
        'request',
      );
    });
    next();
  };
}

export function sendProblem(res: Response, problem: Problem, headers: Record<string, string> = {}): void {
  for (const [name, value] of Object.entries(headers)) res.setHeader(name, value);
  res.status(problem.status).type(PROBLEM_CONTENT_TYPE).send(JSON.stringify(problem));
}

export function errorHandler(logger: Logger, mapError?: (error: unknown) => AppError | undefined): ErrorRequestHandler {
  return (error: unknown, req, res, _next) => {
    let appError: AppError | undefined;
    if (error instanceof AppError) appError = error;
    else if (mapError?.(error)) appError = mapError(error);
    else if (isBodyParserError(error)) {
      if (error.type === 'entity.too.large') appError = new PayloadTooLargeError(`request body exceeds ${error.limit} bytes`);
      else if (error.type === 'entity.parse.failed') appError = new BadRequestError('request body is not valid JSON');
      else if (error.type === 'charset.unsupported' || error.type === 'encoding.unsupported')
        appError = new UnsupportedMediaTypeError(error.message);
    }
    if (res.headersSent) {
      logger.error({ err: error }, 'error after response started');
      return;
    }
    if (appError) {
      if (appError.status >= 500) logger.warn({ err: appError, cause: appError.cause }, appError.detail);
      sendProblem(
        res,
        {
          type: problemType(appError.code),
          title: appError.title,
          status: appError.status,
          detail: appError.detail,
          instance: req.originalUrl,
          ...(appError.errors ? { errors: appError.errors } : {}),
        },
        appError.headers,
      );
      return;
    }
    const errorId = randomUUID();
    logger.error({ err: error, error_id: errorId }, 'unexpected error');
    sendProblem(res, {
      type: problemType('internal_error'),
      title: 'Internal server error',
      status: 500,
      detail: `An unexpected error occurred; quote error id ${errorId} when reporting it.`,
      instance: req.originalUrl,
      error_id: errorId,
    });
  };
}

function isBodyParserError(error: unknown): error is { type: string; limit?: number; message: string } {
  return typeof error === 'object' && error !== null && typeof (error as { type?: unknown }).type === 'string';
}

function hasBody(req: Request): boolean {
  const length = req.headers['content-length'];
  return (length !== undefined && length !== '0') || req.headers['transfer-encoding'] !== undefined;
}

/** A body must be JSON; 415 otherwise. A route without a body schema ignores any body. */
function jsonBody(limit: number): RequestHandler[] {
  const parse = express.json({ limit, strict: false, type: () => true });
  return [
    (req, _res, next) => {
      if (!hasBody(req)) return next();
      const type = req.headers['content-type'] ?? '';
      if (!/^application\/([a-z0-9.+-]+\+)?json\s*(;|$)/i.test(type)) {
        return next(new UnsupportedMediaTypeError(`Content-Type must be application/json, got "${type || 'none'}"`));
      }
      next();
    },
    parse,
  ];
}

function parsePart<S extends z.ZodType | undefined>(schema: S, value: unknown, where: string): unknown {
  if (!schema) return undefined;
  const result = schema.safeParse(value);
  if (!result.success) {
    throw new ValidationError(`the request ${where} is invalid`, { errors: zodFieldErrors(result.error, where === 'body' ? undefined : where) });
  }
  return result.data;
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
    ((req: Request) => Promise.resolve(verifyPrincipal(options.internalSecret, req.method, req.originalUrl, req.headers)));
  const handler: RequestHandler = async (req, res) => {
    const principal = await authenticate(req);
    req.principal = principal;
    authorize(route, principal);
    const params = parsePart(route.params, req.params, 'path');
    const query = parsePart(route.query, req.query, 'query');
    let body: unknown;
    if (route.body) {
      if (req.body === undefined) throw new ValidationError('a JSON request body is required', { errors: { '(body)': ['required'] } });
      body = parsePart(route.body, req.body, 'body');
    }
    const reply = await route.handler({ params, query, body, principal, req, res, log: options.logger });
    if (res.headersSent) return;
    const status = reply.status ?? 200;
    if (options.validateResponses) {
      const declared = route.responses[status];
      if (!declared) throw new Error(`${route.method.toUpperCase()} ${route.path} answered ${status}, which it does not declare`);
      const checked = declared.schema?.safeParse(reply.body);
      if (checked && !checked.success) {
        throw new Error(`${route.method.toUpperCase()} ${route.path} ${status} body does not match its schema: ${checked.error.message}`);
      }
    }
    for (const [name, value] of Object.entries(reply.headers ?? {})) res.setHeader(name, value);
    if (reply.body === undefined) res.status(status).end();
    else res.status(status).json(reply.body);
  };
  const stack: RequestHandler[] = route.body ? jsonBody(options.bodyLimitBytes) : [];
  app[route.method](route.path, ...stack, handler);
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

  app.get('/healthz', (_req, res) => {
    res.json({ status: 'ok', service: options.service });
  });
  app.get('/readyz', async (_req, res) => {
    const checks = await options.readiness().catch(() => ({ readiness: false }));
    const ready = Object.values(checks).every(Boolean);
    res.status(ready ? 200 : 503).json({ status: ready ? 'ready' : 'not_ready', service: options.service, checks });
  });
  app.get('/metrics', async (_req, res) => {
    res.type(options.metrics.registry.contentType).send(await options.metrics.registry.metrics());
  });

  for (const route of options.routes) mount(app, route, options);
  if (options.fallback) app.use(options.fallback);

  app.use((req: Request, _res: Response, next: NextFunction) => {
    next(new NotFoundError(`no route for ${req.method} ${req.path}`));
  });
  app.use(errorHandler(options.logger, options.mapError));
  return app;
}
