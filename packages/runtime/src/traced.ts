import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import {
  context,
  contextOf,
  inService,
  SpanKind,
  SpanStatusCode,
  startSpan,
  trace,
  traceparentOf,
} from '@pack/tracing';

export interface TracedOptions {
  service: string;
  /** Return the server span's `traceparent` in every response (the public gateway: a client can quote it). */
  answerTraceparent: boolean;
}

/**
 * Every request of a service in a SERVER span (the runtime owns the one node server of each
 * service, so this is the one place; decision 0047): it continues an incoming W3C `traceparent`,
 * runs in the service's scope (inService) and ends when the response is done. Only the method,
 * path (no query string), status and route are recorded: never a body or a header value.
 */
export function traced(handler: RequestListener, options: TracedOptions): RequestListener {
  return (req: IncomingMessage, res: ServerResponse) =>
    inService(options.service, () => {
      const method = req.method ?? 'GET';
      const path = (req.url ?? '/').replace(/\?.*$/s, '');
      const span = startSpan(method, {
        kind: SpanKind.SERVER,
        parent: contextOf(req.headers),
        attributes: { 'http.request.method': method, 'url.path': path, 'url.scheme': 'http' },
      });
      if (options.answerTraceparent) {
        const traceparent = traceparentOf(span);
        if (traceparent) res.setHeader('traceparent', traceparent);
      }
      res.once('close', () => {
        const route = (req as { route?: { path?: unknown } }).route?.path;
        if (typeof route === 'string') {
          span.setAttribute('http.route', route);
          span.updateName(`${method} ${route}`);
        }
        span.setAttribute('http.response.status_code', res.statusCode);
        if (res.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
        span.end();
      });
      context.with(trace.setSpan(context.active(), span), () => handler(req, res));
    });
}
