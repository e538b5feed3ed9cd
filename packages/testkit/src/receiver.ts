import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { waitFor } from './waiting';

export interface Received {
  headers: http.IncomingHttpHeaders;
  body: string;
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read the JSON a target received by field name
  json: any;
  at: number;
}

export interface Answer {
  /** Never answer (the connection stays open until the receiver stops). */
  hang?: boolean;
  status: number;
  body?: string;
  headers?: Record<string, string>;
}

export interface ReceiverOptions {
  /** Holds each request this long before recording and answering it (requests in flight). */
  delayMs?: number;
  /** Answers with the request's headers as JSON, as httpbin does (a target that reads back what it got). */
  echo?: boolean;
}

/**
 * A local HTTP target (a webhook receiver) on loopback: records every request and answers from
 * a script (`next`), then `fallback` (200 "ok").
 */
export class Receiver {
  readonly requests: Received[] = [];
  /** Requests read but not answered yet (with `delayMs`). */
  holding = 0;
  fallback: Answer = { status: 200, body: 'ok' };
  url = '';
  private readonly script: Answer[] = [];
  private server?: http.Server;

  constructor(private readonly options: ReceiverOptions = {}) {}

  async start(): Promise<this> {
    this.server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        const answer = () => this.answer(req, res, body);
        if (!this.options.delayMs) return answer();
        this.holding += 1;
        setTimeout(() => {
          this.holding -= 1;
          answer();
        }, this.options.delayMs);
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hook`;
    return this;
  }

  /** Answers for the next requests, in order. */
  next(...answers: Answer[]): void {
    this.script.push(...answers);
  }

  /** Waits until at least `count` requests arrived, and returns them. */
  received(count: number): Promise<Received[]> {
    return waitFor(() => (this.requests.length >= count ? [...this.requests] : undefined), {
      what: `${count} requests at the receiver (got ${this.requests.length})`,
    });
  }

  /** How many requests came in with each webhook-id header (a retry or a double send shows as 2). */
  countsById(): Map<string, number> {
    const counts = new Map<string, number>();
    for (const { headers } of this.requests) {
      const id = String(headers['webhook-id']);
      counts.set(id, (counts.get(id) ?? 0) + 1);
    }
    return counts;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  private answer(req: http.IncomingMessage, res: http.ServerResponse, body: string): void {
    let json: unknown = null;
    try {
      json = JSON.parse(body);
    } catch {
      // kept as text
    }
    this.requests.push({ headers: req.headers, body, json, at: Date.now() });
    if (this.options.echo) {
      res.end(JSON.stringify({ headers: req.headers }));
      return;
    }
    const answer = this.script.shift() ?? this.fallback;
    if (answer.hang) return;
    res.writeHead(answer.status, answer.headers ?? {});
    res.end(answer.body ?? '');
  }
}
