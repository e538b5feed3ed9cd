/** Each request's ids (request, correlation), its access log line and its duration metric. */
import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { RequestHandler } from 'express';
import { context, trace, TraceFlags } from '@opentelemetry/api';
import { runWithContext, type Logger, type RequestContext } from '@pack/logging';
import type { Metrics } from '@pack/metrics';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** The request id (the caller's when well-formed, else new) and the correlation id of a request. */
export function requestIds(req: IncomingMessage): RequestContext & { requestId: string } {
  const given = req.headers['x-request-id'];
  const requestId = typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
  const correlation = req.headers['x-correlation-id'];
  return {
    requestId,
    correlationId: typeof correlation === 'string' && REQUEST_ID.test(correlation) ? correlation : requestId,
  };
}

export function requestContext(): RequestHandler {
  return (req, res, next) => {
    const ids = requestIds(req);
    req.requestId = ids.requestId;
    res.setHeader('x-request-id', ids.requestId);
    runWithContext(ids, next);
  };
}

const QUIET_PATHS = new Set(['/healthz', '/readyz', '/metrics']);

/** Records the duration metric and one access log line when the response finishes. */
export function observeRequest(
  metrics: Metrics,
  logger: Logger,
  req: IncomingMessage,
  res: ServerResponse,
  route: () => string,
  path: string,
): void {
  const start = process.hrtime.bigint();
  // The request's span (the runtime's server span): its trace id is the exemplar, and the access
  // log line, written when the response finishes, is written in it.
  const span = trace.getSpanContext(context.active());
  const traceId = span && span.traceFlags & TraceFlags.SAMPLED ? span.traceId : undefined;
  res.on(
    'finish',
    context.bind(context.active(), () => {
      const seconds = Number(process.hrtime.bigint() - start) / 1e9;
      const template = route();
      metrics.observeHttp(
        { method: req.method ?? '', route: template, status_code: String(res.statusCode) },
        seconds,
        traceId,
      );
      if (QUIET_PATHS.has(path)) return;
      logger.info(
        {
          method: req.method,
          route: template,
          path,
          status: res.statusCode,
          duration_ms: Math.round(seconds * 1e4) / 10,
        },
        'request',
      );
    }),
  );
}

export function observe(metrics: Metrics, logger: Logger): RequestHandler {
  return (req, res, next) => {
    observeRequest(
      metrics,
      logger,
      req,
      res,
      () =>
        (req.route as { path?: string } | undefined)?.path ??
        (QUIET_PATHS.has(req.path) && res.statusCode !== 404 ? req.path : 'unmatched'),
      req.path,
    );
    next();
  };
}
