import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { promptText, type Responder } from './by-prompt';
import type { FakeReply, RecordedRequest } from './recorded';

export type { FakeReply, RecordedRequest } from './recorded';

/** What goes wrong on a generation request; the protocol supplies the realistic bodies. */
export type Fault =
  | { kind: 'status'; status: number; message?: string; retryAfter?: string }
  | { kind: 'empty' }
  | { kind: 'error_in_200'; message?: string }
  | { kind: 'invalid_json' }
  | { kind: 'truncated' }
  /** Any raw answer, e.g. a blocked prompt or a failed finish reason. */
  | { kind: 'body'; status: number; body: unknown };

export interface Behaviour {
  latencyMs?: number;
  fault?: Fault;
  /** The answer waits until this settles (a call held open while the test acts), then as configured. */
  until?: Promise<unknown>;
}

export interface Reply {
  status: number;
  body: unknown;
  headers?: Record<string, string>;
}

/** Answers of one protocol. `route` returns 'generate' for the generation route. */
export interface FakeProtocol {
  route(req: RecordedRequest): Reply | 'generate' | undefined;
  success(req: RecordedRequest, reply: FakeReply): unknown;
  empty(req: RecordedRequest): unknown;
  error(status: number, message: string): unknown;
}

/**
 * A fake provider on 127.0.0.1, port 0. Records every request; generation requests follow the
 * queued one-shot behaviours first, then the standing one.
 */
export class FakeProviderServer {
  readonly requests: RecordedRequest[] = [];
  private readonly queued: Behaviour[] = [];
  private readonly delays = new Set<NodeJS.Timeout>();
  private standing: Behaviour = {};
  private server?: http.Server;
  url = '';
  reply: FakeReply = { text: 'Hello from the fake provider.' };
  /** Replies of the next generation requests, one per call, before `reply` applies again. */
  private readonly scripted: FakeReply[] = [];
  /** Replies chosen by the prompt, asked before the scripted ones (`replyBy`). */
  private responders: Responder[] = [];

  constructor(private readonly protocol: FakeProtocol) {}

  async start(): Promise<this> {
    this.server = http.createServer((req, res) => void this.handle(req, res));
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  /** The behaviour of the next generation request only. */
  next(behaviour: Behaviour): this {
    this.queued.push(behaviour);
    return this;
  }

  /** Scripts the contents of the next successful generations, one reply per call, in order. */
  scriptReplies(...replies: (string | FakeReply)[]): this {
    for (const r of replies) this.scripted.push(typeof r === 'string' ? { text: r } : r);
    return this;
  }

  /**
   * A reply chosen by the request's prompt (by-prompt.ts), asked first on every successful
   * generation: its undefined leaves the call to the scripted and standing replies. Returns the
   * way to take it back.
   */
  replyBy(responder: Responder): () => void {
    this.responders.push(responder);
    return () => {
      this.responders = this.responders.filter((kept) => kept !== responder);
    };
  }

  /** The behaviour of every generation request without a queued one. */
  always(behaviour: Behaviour): this {
    this.standing = behaviour;
    return this;
  }

  requestsTo(pathPart: string): RecordedRequest[] {
    return this.requests.filter((r) => r.path.includes(pathPart));
  }

  async close(): Promise<void> {
    const server = this.server;
    if (!server) return;
    for (const timer of this.delays) clearTimeout(timer);
    this.delays.clear();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }

  private chosen(request: RecordedRequest): FakeReply | undefined {
    if (this.responders.length === 0) return undefined;
    const prompt = promptText(request);
    for (const responder of this.responders) {
      const reply = responder(prompt, request);
      if (reply) return reply;
    }
    return undefined;
  }

  /** A latency that close() cuts short, so no timer outlives the test. */
  private delay(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.delays.delete(timer);
        resolve();
      }, ms).unref();
      this.delays.add(timer);
    });
  }

  private async handle(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const raw = Buffer.concat(chunks).toString('utf8');
    let body: unknown = raw;
    try {
      body = raw ? JSON.parse(raw) : undefined;
    } catch {
      // kept as text
    }
    const recorded: RecordedRequest = {
      method: req.method ?? '',
      path: req.url ?? '',
      headers: req.headers,
      body,
    };
    this.requests.push(recorded);
    const routed = this.protocol.route(recorded);
    if (routed === undefined) return send(res, { status: 404, body: this.protocol.error(404, 'Not found') });
    if (routed !== 'generate') return send(res, routed);
    const behaviour = this.queued.shift() ?? this.standing;
    if (behaviour.until) await behaviour.until.catch(() => undefined);
    if (behaviour.latencyMs) await this.delay(behaviour.latencyMs);
    if (res.destroyed) return;
    const fault = behaviour.fault;
    if (!fault)
      return send(res, {
        status: 200,
        body: this.protocol.success(recorded, this.chosen(recorded) ?? this.scripted.shift() ?? this.reply),
      });
    switch (fault.kind) {
      case 'status': {
        const message = fault.message ?? `upstream answered ${fault.status}`;
        const headers: Record<string, string> = fault.retryAfter ? { 'retry-after': fault.retryAfter } : {};
        return send(res, { status: fault.status, body: this.protocol.error(fault.status, message), headers });
      }
      case 'empty':
        return send(res, { status: 200, body: this.protocol.empty(recorded) });
      case 'error_in_200':
        return send(res, { status: 200, body: this.protocol.error(500, fault.message ?? 'internal error') });
      case 'invalid_json':
        res.writeHead(200, { 'content-type': 'text/html' });
        return void res.end('<html><body><h1>502 Bad Gateway</h1></body></html>');
      case 'truncated': {
        // Announce the whole body, send half of it, then drop the connection.
        const full = Buffer.from(JSON.stringify(this.protocol.success(recorded, this.reply)));
        res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(full.length) });
        res.write(full.subarray(0, Math.floor(full.length / 2)));
        return void setImmediate(() => res.socket?.destroy());
      }
      case 'body':
        return send(res, { status: fault.status, body: fault.body });
    }
  }
}

function send(res: http.ServerResponse, reply: Reply): void {
  const text = JSON.stringify(reply.body ?? null);
  res.writeHead(reply.status, { 'content-type': 'application/json', ...reply.headers });
  res.end(text);
}

let counter = 0;
/**
 * Ids in the providers' own style ("chatcmpl-…", "msg_…"), hex after the prefix: no window of a
 * seeded secret reads as hex (suite-scan.ts), so an id in a logged URL never looks like a leak (a
 * base-36 timestamp once matched 6 characters of a key, case-insensitively).
 */
export function fakeId(prefix: string): string {
  counter += 1;
  return `${prefix}${Date.now().toString(16)}${counter}`;
}

export function headerOf(req: RecordedRequest, name: string): string | undefined {
  const value = req.headers[name.toLowerCase()];
  return Array.isArray(value) ? value[0] : value;
}
