import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A service that owns no records: every read answers 404 problem+json, as the catalog or the
 * llm-gateway does for an id it does not have. For component tests of a service that asks the
 * owner of a record missing from its projection.
 */
export async function startEmptyOwner(): Promise<{ url: string; close(): Promise<void> }> {
  const server = http.createServer((req, res) => {
    res.writeHead(404, { 'content-type': 'application/problem+json' });
    res.end(JSON.stringify({ type: 'about:blank', title: 'Not Found', status: 404, detail: `${req.url}` }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
