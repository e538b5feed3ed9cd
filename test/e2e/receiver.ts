/** A webhook target on loopback for the e2e tests: keeps every request, answers 200 (after `delayMs`). */
import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface Received {
  headers: http.IncomingHttpHeaders;
  body: string;
}

export class Receiver {
  readonly received: Received[] = [];
  /** Requests read but not answered yet. */
  holding = 0;
  url = '';
  private readonly server: http.Server;

  /** `echo`: answer with the request's headers as JSON, as httpbin does (a target that reads back what it got). */
  constructor(
    private readonly delayMs = 0,
    private readonly echo = false,
  ) {
    this.server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        this.holding += 1;
        setTimeout(() => {
          this.holding -= 1;
          this.received.push({ headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
          res.end(this.echo ? JSON.stringify({ headers: req.headers }) : 'thanks');
        }, this.delayMs);
      });
    });
  }

  static async start(delayMs = 0, echo = false): Promise<Receiver> {
    const receiver = new Receiver(delayMs, echo);
    await new Promise<void>((resolve) => receiver.server.listen(0, '127.0.0.1', resolve));
    receiver.url = `http://127.0.0.1:${(receiver.server.address() as AddressInfo).port}/hook`;
    return receiver;
  }

  /** How many requests came in with each webhook-id header (a retry or a double send shows as 2). */
  countsById(): Map<string, number> {
    const counts = new Map<string, number>();
    for (const { headers } of this.received) {
      const id = String(headers['webhook-id']);
      counts.set(id, (counts.get(id) ?? 0) + 1);
    }
    return counts;
  }

  async close(): Promise<void> {
    this.server.closeAllConnections();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
