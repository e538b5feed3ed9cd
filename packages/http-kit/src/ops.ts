import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Metrics } from '@pack/metrics';

export type ReadinessCheck = () => Promise<Record<string, boolean>>;

export interface OpsEndpointOptions {
  service: string;
  metrics: Metrics;
  readiness: ReadinessCheck;
  /** False on a port that faces the outside world: /metrics is then left to the metrics listener. */
  serveMetrics: boolean;
}

/** Where a request goes, without its query string. */
function pathOf(req: IncomingMessage): string {
  const url = req.url ?? '/';
  const query = url.indexOf('?');
  return query < 0 ? url : url.slice(0, query);
}

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
  res.end(JSON.stringify(body));
}

/**
 * The operations endpoints every service answers: `/healthz` (alive), `/readyz` (dependencies
 * reachable) and `/metrics` (Prometheus). Returns false for any other request, which the caller
 * then answers. Used by the express app on the main port and by the internal metrics listener,
 * so both answer the same way (docs/decisions/0020).
 */
export function opsEndpoints(options: OpsEndpointOptions) {
  return (req: IncomingMessage, res: ServerResponse): boolean => {
    if (req.method !== 'GET' && req.method !== 'HEAD') return false;
    const path = pathOf(req);
    switch (path) {
      case '/healthz':
        sendJson(res, 200, { status: 'ok', service: options.service });
        return true;
      case '/readyz':
        void options
          .readiness()
          .catch(() => ({ readiness: false }))
          .then((checks) => {
            const ready = Object.values(checks).every(Boolean);
            sendJson(res, ready ? 200 : 503, {
              status: ready ? 'ready' : 'not_ready',
              service: options.service,
              checks,
            });
          });
        return true;
      case '/metrics':
      case '/metrics/exemplars': {
        if (!options.serveMetrics) return false;
        const registry = path === '/metrics' ? options.metrics.registry : options.metrics.exemplars;
        registry.metrics().then(
          (text) => {
            res.writeHead(200, { 'content-type': registry.contentType });
            res.end(text);
          },
          () => sendJson(res, 500, { status: 'metrics_failed', service: options.service }),
        );
        return true;
      }
      default:
        return false;
    }
  };
}
