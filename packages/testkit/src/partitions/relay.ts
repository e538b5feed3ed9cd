import net from 'node:net';
import { connectUpstream } from '../tcp-proxy';

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
  /** Connections accepted, by the address they came from (which host called through it). */
  readonly accepted = new Map<string, number>();

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

  /** The port it listens on (the one given, or the one the system chose for 0). */
  boundPort(): number {
    return (this.server!.address() as net.AddressInfo).port;
  }

  /** Adds latency to every byte relayed from now on, both ways (undefined: none). */
  slow(delay: Delay | undefined): void {
    this.delay = delay;
  }

  private join(client: net.Socket): void {
    const from = client.remoteAddress ?? '';
    this.accepted.set(from, (this.accepted.get(from) ?? 0) + 1);
    const upstream = connectUpstream(client, this.targetHost, this.targetPort, this.sockets);
    this.pipe(client, upstream);
    this.pipe(upstream, client);
  }

  /**
   * Copies `from` to `to`, each chunk after the current delay and never before an earlier one:
   * one queue per direction drained by one timer (timers of different lengths may fire out of
   * order, which would reorder the stream).
   */
  private pipe(from: net.Socket, to: net.Socket): void {
    const queue: { at: number; chunk: Buffer }[] = [];
    let timer: NodeJS.Timeout | undefined;
    let ended = false;
    const drain = () => {
      timer = undefined;
      while (queue.length > 0 && queue[0]!.at <= Date.now()) {
        const { chunk } = queue.shift()!;
        if (to.writable) to.write(chunk);
      }
      if (queue.length > 0) timer = setTimeout(drain, queue[0]!.at - Date.now());
      else if (ended) to.end();
    };
    from.on('data', (chunk: Buffer) => {
      const delay = this.delay;
      if (!delay && queue.length === 0) {
        to.write(chunk);
        return;
      }
      const wait = delay ? delay.ms + (Math.random() * 2 - 1) * delay.jitterMs : 0;
      queue.push({ at: Math.max(queue.at(-1)?.at ?? 0, Date.now() + wait), chunk });
      timer ??= setTimeout(drain, Math.max(0, queue[0]!.at - Date.now()));
    });
    from.on('end', () => {
      ended = true;
      if (queue.length === 0) to.end();
    });
  }

  async stop(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    this.sockets.clear();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }
}
