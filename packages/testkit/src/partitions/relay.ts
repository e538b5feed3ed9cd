import net from 'node:net';

/** A slow link's added latency: each chunk waits `ms` ± `jitterMs` (uniformly), order kept. */
export interface Delay {
  ms: number;
  jitterMs: number;
}

/**
 * A TCP relay from an address on the partition bridge to a server of the root namespace (the
 * shared RabbitMQ and database listen on loopback, which no namespace reaches). Packets to the
 * relay's address cross the bridge, where the nemeses cut or slow them; a slowed relay adds the
 * latency that the kernel's netem would, which this machine's kernel lacks.
 */
export class Relay {
  private server?: net.Server;
  private readonly sockets = new Set<net.Socket>();
  private delay: Delay | undefined;

  constructor(
    readonly address: string,
    readonly port: number,
    private readonly targetHost: string,
    private readonly targetPort: number,
  ) {}

  async start(): Promise<this> {
    this.server = net.createServer((client) => this.join(client));
    await new Promise<void>((resolve, reject) => {
      this.server!.once('error', reject);
      this.server!.listen(this.port, this.address, resolve);
    });
    return this;
  }

  /** Adds latency to every byte relayed from now on, both ways (undefined: none). */
  slow(delay: Delay | undefined): void {
    this.delay = delay;
  }

  private join(client: net.Socket): void {
    const upstream = net.connect(this.targetPort, this.targetHost);
    this.sockets.add(client).add(upstream);
    const drop = () => {
      client.destroy();
      upstream.destroy();
      this.sockets.delete(client);
      this.sockets.delete(upstream);
    };
    client.on('error', drop).on('close', drop);
    upstream.on('error', drop).on('close', drop);
    this.pipe(client, upstream);
    this.pipe(upstream, client);
  }

  /** Copies `from` to `to`, each chunk after the current delay, never before an earlier chunk. */
  private pipe(from: net.Socket, to: net.Socket): void {
    let last = 0;
    from.on('data', (chunk: Buffer) => {
      const delay = this.delay;
      if (!delay && last <= Date.now()) {
        to.write(chunk);
        return;
      }
      const wait = delay ? delay.ms + (Math.random() * 2 - 1) * delay.jitterMs : 0;
      const at = Math.max(last, Date.now() + wait);
      last = at;
      setTimeout(() => to.writable && to.write(chunk), at - Date.now());
    });
    from.on('end', () => setTimeout(() => to.end(), Math.max(0, last - Date.now())));
  }

  async stop(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    this.sockets.clear();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}
