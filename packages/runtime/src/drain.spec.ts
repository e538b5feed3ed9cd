import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client } from 'undici';
import { drainable } from './drain';

/** A server whose handler answers `ok`, drainable, on a loopback port; and a keep-alive client of it. */
async function served(idleGraceMs = 1000) {
  const http = drainable((_req, res) => {
    res.end('ok');
  }, idleGraceMs);
  const server: Server = createServer(http.handler);
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const client = new Client(`http://127.0.0.1:${(server.address() as AddressInfo).port}`, {
    keepAliveTimeout: 60_000,
  });
  const get = async () => {
    const answer = await client.request({ method: 'PATCH', path: '/', body: '{}' });
    return {
      status: answer.statusCode,
      connection: answer.headers.connection,
      text: await answer.body.text(),
    };
  };
  return { http, server, client, get };
}

describe('drainable', () => {
  it('answers a request sent on a kept-alive connection as the drain begins, and closes that connection after it', async () => {
    const { http, server, client, get } = await served();
    try {
      expect((await get()).status).toBe(200); // the connection is now idle, kept alive
      const drained = http.drain(server);
      // Sent on the idle connection while the service starts its stop: a client cannot know.
      const during = await get();
      expect(during).toEqual({ status: 200, connection: 'close', text: 'ok' });
      await drained;
    } finally {
      await client.destroy();
      server.closeAllConnections();
    }
  });

  it('ends the grace as soon as every client has closed its connection', async () => {
    // A grace past jest's time-out: the drain ends only because the client went.
    const { http, server, client, get } = await served(3_600_000);
    expect((await get()).status).toBe(200);
    const drained = http.drain(server);
    await client.close();
    await drained;
    expect(server.listening).toBe(false);
  });

  it('closes a connection that stays idle once the drain has begun, so the stop ends', async () => {
    const { http, server, client, get } = await served();
    try {
      expect((await get()).status).toBe(200);
      await http.drain(server); // resolves only once every connection is closed
      expect(server.listening).toBe(false);
    } finally {
      await client.destroy();
    }
  });
});
