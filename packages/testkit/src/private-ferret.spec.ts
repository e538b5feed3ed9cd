import net from 'node:net';
import type { AddressInfo } from 'node:net';
import { answers } from './private-ferret';

/** Keeps this process's event loop busy, as a loaded CI worker's is. */
const busy = (ms: number) => {
  const until = Date.now() + ms;
  while (Date.now() < until);
};

describe('answers(port), the wait for a private FerretDB to listen', () => {
  let server: net.Server;
  let port: number;
  beforeAll(async () => {
    server = net.createServer((socket) => socket.destroy());
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(() => new Promise((resolve) => server.close(resolve)));

  it('says true for a listening port and false for a closed one', async () => {
    expect(await answers(port)).toBe(true);
    const closed = net.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const closedPort = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    expect(await answers(closedPort)).toBe(false);
  });

  it('settles when the event loop is late past its give-up time (it used to stay pending for good)', async () => {
    const answer = answers(port, 50);
    busy(200);
    const outcome = await Promise.race([
      answer,
      new Promise((resolve) => setTimeout(() => resolve('still pending'), 2000)),
    ]);
    expect([true, false]).toContain(outcome);
  });
});
