import net from 'node:net';
import { waitFor } from '../waiting';
import { Relay } from './relay';

describe('a relay of the partition network', () => {
  it('a slowed relay delays every chunk and keeps the stream in order', async () => {
    const echo = net.createServer((socket) => socket.pipe(socket));
    await new Promise<void>((resolve) => echo.listen(0, '127.0.0.1', resolve));
    const target = (echo.address() as net.AddressInfo).port;
    const relay = await new Relay('127.0.0.1', 0, '127.0.0.1', target).start();
    relay.slow({ ms: 40, jitterMs: 30 });
    const client = net.connect(relay.boundPort(), '127.0.0.1');
    let received = '';
    client.on('data', (chunk: Buffer) => (received += chunk.toString()));
    const sent = Array.from({ length: 300 }, (_, i) => `${i};`);
    for (const piece of sent) {
      client.write(piece);
      await new Promise((resolve) => setImmediate(resolve));
    }
    const expected = sent.join('');
    await waitFor(() => received.length >= expected.length, { what: 'every chunk back' });
    expect(received).toBe(expected);
    client.destroy();
    await relay.stop();
    echo.close();
  });
});
