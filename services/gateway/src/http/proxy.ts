import type { IncomingHttpHeaders, IncomingMessage, ServerResponse } from 'node:http';
import { Pool, errors as undiciErrors } from 'undici';
import {
  type AppError,
  BadGatewayError,
  GatewayTimeoutError,
  observeRequest,
  PayloadTooLargeError,
  principalHeaders,
  requestIds,
  respondWithError,
  ServiceUnavailableError,
  UnauthorizedError,
} from '@pack/http-kit';
import type { Principal } from '@pack/contracts';
import { runWithContext, type Logger } from '@pack/logging';
import type { Metrics } from '@pack/metrics';
import { upstreamFor, upstreamTimeoutMs, type Upstream } from '../domain/routing';

const HOP_BY_HOP = new Set([
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'host',
  'content-length',
]);

export interface ProxyOptions {
  upstreams: Record<Upstream, string>;
  /** The general limit; routes that may take longer have their own (upstreamTimeoutMs). */
  timeoutMs: number;
  internalSecret: string;
  bodyLimitBytes: number;
  logger: Logger;
  metrics: Metrics;
  authenticate: (header: string | undefined) => Promise<Principal | null>;
  /** Maps a store's errors (the database away: 503) before anything else becomes a 500. */
  mapError?: (error: unknown) => AppError | undefined;
}

/**
 * The caller's trace context is continued by the gateway's own spans, whose context the tracing
 * SDK puts on the forwarded request: the caller's would make a second, conflicting traceparent.
 */
const TRACE_CONTEXT = new Set(['traceparent', 'tracestate']);

/** What the gateway forwards: never the caller's token, never caller-supplied principal headers. */
function forwardedHeaders(
  incoming: IncomingHttpHeaders,
  extra: Record<string, string>,
): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(incoming)) {
    if (
      value === undefined ||
      HOP_BY_HOP.has(name) ||
      TRACE_CONTEXT.has(name) ||
      name === 'authorization' ||
      name.startsWith('x-pack-')
    )
      continue;
    headers[name] = Array.isArray(value) ? value.join(', ') : value;
  }
  return { ...headers, ...extra };
}

/**
 * The proxy is the platform's hot path, so it runs on the plain node server before express:
 * request id, authentication, forwarding, metrics and the access log, and problem+json errors
 * from the same helpers express uses.
 */
export function createProxy(options: ProxyOptions) {
  const pools = new Map<Upstream, Pool>();
  const poolFor = (upstream: Upstream) => {
    let pool = pools.get(upstream);
    if (!pool) {
      pool = new Pool(options.upstreams[upstream], {
        connections: 128,
        keepAliveTimeout: 30_000,
        pipelining: 1,
      });
      pools.set(upstream, pool);
    }
    return pool;
  };

  async function forward(
    req: IncomingMessage,
    res: ServerResponse,
    upstream: Upstream,
    url: string,
    path: string,
    requestId: string,
  ) {
    const principal = await options.authenticate(req.headers.authorization);
    if (!principal) throw new UnauthorizedError('Send a valid API token as "Authorization: Token <token>".');

    const length = Number(req.headers['content-length'] ?? 0);
    if (length > options.bodyLimitBytes)
      throw new PayloadTooLargeError(`request body exceeds ${options.bodyLimitBytes} bytes`);
    const hasBody = length > 0 || req.headers['transfer-encoding'] !== undefined;
    const method = req.method ?? 'GET';

    const headers = forwardedHeaders(req.headers, {
      ...principalHeaders(options.internalSecret, method, url, principal),
      'x-request-id': requestId,
      'x-forwarded-for': req.socket.remoteAddress ?? '',
      ...(hasBody && req.headers['content-length']
        ? { 'content-length': req.headers['content-length'] }
        : {}),
    });

    const timeoutMs = upstreamTimeoutMs(method, path, options.timeoutMs);
    let response;
    try {
      response = await poolFor(upstream).request({
        method,
        path: url,
        headers,
        body: hasBody ? req : undefined,
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
      });
    } catch (error) {
      throw upstreamError(upstream, error);
    }
    res.statusCode = response.statusCode;
    for (const [name, value] of Object.entries(response.headers)) {
      if (value !== undefined && !HOP_BY_HOP.has(name)) res.setHeader(name, value);
    }
    res.setHeader('x-request-id', requestId);
    try {
      for await (const chunk of response.body) res.write(chunk);
      res.end();
    } catch (error) {
      options.logger.warn({ err: error, upstream }, 'upstream response broke off');
      res.destroy();
    }
  }

  /** Answers requests for paths a service owns; false for anything else (express takes it). */
  const handler = (req: IncomingMessage, res: ServerResponse): boolean => {
    const url = req.url ?? '/';
    const query = url.indexOf('?');
    const path = query === -1 ? url : url.slice(0, query);
    const upstream = upstreamFor(path);
    if (!upstream) return false;
    const ids = requestIds(req);
    res.setHeader('x-request-id', ids.requestId);
    observeRequest(options.metrics, options.logger, req, res, () => `proxy:${upstream}`, path);
    runWithContext(ids, () => {
      forward(req, res, upstream, url, path, ids.requestId).catch((error: unknown) => {
        // Drain what the caller still sends, so the connection stays usable for its next request.
        req.resume();
        respondWithError(error, res, url, options.logger, options.mapError);
      });
    });
    return true;
  };

  return {
    handler,
    close: async () => {
      await Promise.all([...pools.values()].map((pool) => pool.close()));
    },
  };
}

function upstreamError(upstream: Upstream, error: unknown) {
  const code = (error as { code?: string }).code;
  if (error instanceof undiciErrors.HeadersTimeoutError || error instanceof undiciErrors.BodyTimeoutError) {
    return new GatewayTimeoutError(`the ${upstream} service did not answer in time`, { cause: error });
  }
  if (code === 'ECONNREFUSED' || code === 'ENOTFOUND' || code === 'EAI_AGAIN' || code === 'EHOSTUNREACH') {
    return new ServiceUnavailableError(`the ${upstream} service is unavailable`, { cause: error });
  }
  return new BadGatewayError(`the ${upstream} service failed to answer`, { cause: error });
}
