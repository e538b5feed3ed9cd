import type { IncomingMessage, Server, ServerResponse } from 'node:http';

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

/**
 * Graceful close of an HTTP server with keep-alive clients. `server.close()` alone waits for
 * every kept-alive connection to be closed by its client (up to the keep-alive timeout), so a
 * service under load missed its shutdown deadline. While draining, every response still to be
 * written says `Connection: close` (the socket ends after it), idle connections are closed at
 * once and again until none is left; responses in flight are written in full.
 */
export function drainable(handler: Handler): { handler: Handler; drain: (server: Server) => Promise<void> } {
  const inFlight = new Set<ServerResponse>();
  let draining = false;
  const closeAfter = (res: ServerResponse) => {
    if (!res.headersSent) res.setHeader('connection', 'close');
  };
  return {
    handler(req, res) {
      inFlight.add(res);
      res.once('close', () => inFlight.delete(res));
      if (draining) closeAfter(res);
      handler(req, res);
    },
    drain(server) {
      draining = true;
      for (const res of inFlight) closeAfter(res);
      return new Promise<void>((resolve) => {
        // A response whose headers were already out keeps its connection: closed once idle.
        const sweep = setInterval(() => server.closeIdleConnections(), 100);
        server.close(() => {
          clearInterval(sweep);
          resolve();
        });
        server.closeIdleConnections();
      });
    },
  };
}
