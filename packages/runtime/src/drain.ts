import type { IncomingMessage, Server, ServerResponse } from 'node:http';

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

/**
 * Graceful close of an HTTP server with keep-alive clients. `server.close()` alone waits for
 * every kept-alive connection to be closed by its client (up to the keep-alive timeout), so a
 * service under load missed its shutdown deadline. While draining, every response still to be
 * written says `Connection: close` (the socket ends after it). A connection idle when the drain
 * begins is left open for `idleGraceMs`: a client may be sending its next request on it at that
 * moment (it cannot know), and closing it at once drops that request ("other side closed"); the
 * grace ends early once no connection is left. Then the server stops listening and closes the
 * idle connections, and again until none is left; responses in flight are written in full.
 */
export function drainable(
  handler: Handler,
  idleGraceMs: number,
): { handler: Handler; drain: (server: Server) => Promise<void> } {
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
        let closing = false;
        const close = () => {
          if (closing) return;
          closing = true;
          clearTimeout(grace);
          clearInterval(watch);
          // A response whose headers were already out keeps its connection: closed once idle.
          const sweep = setInterval(() => server.closeIdleConnections(), 100);
          server.close(() => {
            clearInterval(sweep);
            resolve();
          });
        };
        // Not closed at once: server.close() closes the idle connections too (Node 19 and later).
        const grace = setTimeout(close, idleGraceMs);
        // Nobody left to answer: the grace ends early.
        const watch = setInterval(
          () => server.getConnections((error, count) => !error && count === 0 && close()),
          100,
        );
      });
    },
  };
}
