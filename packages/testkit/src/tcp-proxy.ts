import net from 'node:net';

/**
 * A TCP proxy in front of a real server that a test can cut and restore, to simulate an outage
 * of RabbitMQ or MongoDB for one service without disturbing any other test.
 */
export class TcpProxy {
  private server?: net.Server;
  private readonly sockets = new Set<net.Socket>();
  private down = false;
  port = 0;
  /** Connections refused while cut: a client that tried to reconnect meanwhile. */
  refused = 0;

  constructor(
    private readonly targetHost: string,
    private readonly targetPort: number,
  ) {}

  static forUrl(url: string): TcpProxy {
    const parsed = new URL(url);
    const defaultPort = parsed.protocol.startsWith('amqp') ? 5672 : 27017;
    return new TcpProxy(parsed.hostname, Number(parsed.port || defaultPort));
  }

  /** The same URL, pointing at the proxy. */
  rewrite(url: string): string {
    const parsed = new URL(url);
    parsed.hostname = '127.0.0.1';
    parsed.port = String(this.port);
    return parsed.toString();
  }

  async start(): Promise<this> {
    this.server = net.createServer((client) => {
      if (this.down) {
        this.refused += 1;
        client.destroy();
        return;
      }
      const upstream = connectUpstream(client, this.targetHost, this.targetPort, this.sockets);
      client.pipe(upstream).pipe(client);
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as net.AddressInfo).port;
    return this;
  }

  /** Drops every open connection and refuses new ones until restore(). */
  cut(): void {
    this.down = true;
    for (const socket of this.sockets) socket.destroy();
    this.sockets.clear();
  }

  restore(): void {
    this.down = false;
  }

  async stop(): Promise<void> {
    this.cut();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}

/**
 * Opens the upstream connection of an accepted client; both are kept in `open` while they live,
 * and either one ending or failing ends the other.
 */
export function connectUpstream(
  client: net.Socket,
  host: string,
  port: number,
  open: Set<net.Socket>,
): net.Socket {
  const upstream = net.connect(port, host);
  open.add(client).add(upstream);
  const drop = () => {
    client.destroy();
    upstream.destroy();
    open.delete(client);
    open.delete(upstream);
  };
  client.on('error', drop).on('close', drop);
  upstream.on('error', drop).on('close', drop);
  return upstream;
}
