import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import net from 'node:net';
import { Writable } from 'node:stream';
import amqp from 'amqplib';
import mongoose from 'mongoose';
import { REPO_ROOT } from './infra';

export const TEST_INTERNAL_SECRET = 'test-internal-secret-0123456789abcdef';
/** A fixed encryption key (32 bytes, base64) for tests only; deployments bring their own. */
export const TEST_ENCRYPTION_KEY = Buffer.from('pack-test-only-encryption-key-32').toString('base64');

/** A name no other test (or earlier run) uses: databases, broker namespaces, usernames. */
export function uniqueName(prefix: string): string {
  return `${prefix}_${Date.now().toString(36)}${randomBytes(3).toString('hex')}`.toLowerCase();
}

/** Environment for a service under test: its own database and broker namespace, port 0. */
export function testEnv(service: string, overrides: Record<string, string> = {}): Record<string, string> {
  const mongoUrl = process.env.MONGO_URL;
  const amqpUrl = process.env.AMQP_URL;
  if (!mongoUrl || !amqpUrl)
    throw new Error('MONGO_URL and AMQP_URL are not set: run the tests through jest (globalSetup)');
  return {
    NODE_ENV: 'test',
    LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'silent',
    HOST: '127.0.0.1',
    PORT: '0',
    METRICS_PORT: '0',
    MONGO_URL: mongoUrl,
    AMQP_URL: amqpUrl,
    MONGO_DB: uniqueName(`t_${service.replace(/-/g, '_')}`),
    BROKER_NAMESPACE: uniqueName('t'),
    PACK_INTERNAL_SECRET: TEST_INTERNAL_SECRET,
    PACK_ENCRYPTION_KEYS: `test:${TEST_ENCRYPTION_KEY}`,
    PACK_ENCRYPTION_KEY_ID: 'test',
    ...overrides,
  };
}

export async function waitFor<T>(
  probe: () => Promise<T | undefined | null | false> | T | undefined | null | false,
  { timeoutMs = 15_000, intervalMs = 50, what = 'condition' } = {},
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value) return value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline)
      throw new Error(
        `timed out after ${timeoutMs} ms waiting for ${what}${last instanceof Error ? `: ${last.message}` : ''}`,
      );
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}

/** The value of a service's Prometheus metric (the first series of that name; 0 while it has none). */
export async function metricValue(baseUrl: string, name: string): Promise<number> {
  const text = await (await fetch(`${baseUrl}/metrics`)).text();
  const match = new RegExp(`^${name}(?:\\{[^}]*\\})? (\\d+(?:\\.\\d+)?)$`, 'm').exec(text);
  return match ? Number(match[1]) : 0;
}

/**
 * The value of the series of `name` carrying `labels` (among others, e.g. the service label) in
 * a Prometheus text page, 0 when there is none yet. Read before and after what a test does, the
 * difference is what it added, whatever earlier tests counted.
 */
export function metricSample(text: string, name: string, labels: Record<string, string> = {}): number {
  const wanted = Object.entries(labels).map(([key, value]) => `${key}="${value}"`);
  for (const line of text.split('\n')) {
    const match = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (match?.[1] !== name) continue;
    const present = (match[2] ?? '').split(',');
    if (wanted.every((pair) => present.includes(pair))) return Number(match[3]);
  }
  return 0;
}

/** A service's /metrics page as text. */
export async function metricsText(baseUrl: string): Promise<string> {
  return (await fetch(`${baseUrl}/metrics`)).text();
}

/** Collects log lines in memory so a test can read exactly what a service logged. */
export class LogCapture extends Writable {
  readonly lines: string[] = [];
  override _write(chunk: Buffer, _encoding: string, callback: () => void): void {
    this.lines.push(...chunk.toString('utf8').split('\n').filter(Boolean));
    callback();
  }
  get text(): string {
    return this.lines.join('\n');
  }
  records(): Record<string, unknown>[] {
    return this.lines.map((line) => JSON.parse(line) as Record<string, unknown>);
  }
}

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

/** Removes what a test created, so repeated runs leave nothing behind. */
export async function dropDatabase(mongoUrl: string, dbName: string): Promise<void> {
  const connection = await mongoose
    .createConnection(mongoUrl, { dbName, serverSelectionTimeoutMS: 5000 })
    .asPromise();
  try {
    await connection.dropDatabase();
  } finally {
    await connection.close();
  }
}

export async function deleteQueues(amqpUrl: string, queues: readonly string[]): Promise<void> {
  const connection = await amqp.connect(amqpUrl);
  try {
    for (const queue of queues) {
      const channel = await connection.createChannel();
      await channel.deleteQueue(queue).catch(() => undefined);
      await channel.close().catch(() => undefined);
    }
  } finally {
    await connection.close();
  }
}

interface StoppableService {
  stop(): Promise<void>;
  context: {
    config: { MONGO_URL: string; MONGO_DB: string; AMQP_URL: string };
    broker: { declaredQueues(): string[] };
  };
}

/** Stops a service started in a test and removes its database and queues. */
export async function stopAndClean(service: StoppableService): Promise<void> {
  const { MONGO_URL, MONGO_DB, AMQP_URL } = service.context.config;
  const queues = service.context.broker.declaredQueues();
  await service.stop();
  await dropDatabase(MONGO_URL, MONGO_DB);
  if (queues.length > 0) await deleteQueues(AMQP_URL, queues);
}

/**
 * Runs one of the repository's TypeScript entry points (a service's main.ts, a CLI) as its own
 * process with exactly the given environment (plus PATH), and waits for it to end.
 */
export function runEntryPoint(file: string, args: string[], env: Record<string, string | undefined>) {
  return spawnSync(process.execPath, ['--require', 'tsx/cjs', path.join(REPO_ROOT, file), ...args], {
    env: { PATH: process.env.PATH, ...env },
    cwd: REPO_ROOT,
    encoding: 'utf8',
    timeout: 60_000,
  });
}

export interface EntryPointResult {
  status: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/**
 * Starts one of the repository's entry points as its own process without waiting: the test can
 * signal it (`child.kill('SIGTERM')`), read its standard output so far (`output()`) and await
 * `exited`. Killed after `lifetimeMs` (60 s) at the latest.
 */
export function startEntryPoint(
  file: string,
  args: string[],
  env: Record<string, string | undefined>,
  { lifetimeMs = 60_000 } = {},
): { child: ChildProcess; exited: Promise<EntryPointResult>; output: () => string } {
  const child = spawn(process.execPath, ['--require', 'tsx/cjs', path.join(REPO_ROOT, file), ...args], {
    env: { PATH: process.env.PATH, ...env },
    cwd: REPO_ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const timer = setTimeout(() => child.kill('SIGKILL'), lifetimeMs);
  const exited = new Promise<EntryPointResult>((resolve) =>
    child.on('close', (status, signal) => {
      clearTimeout(timer);
      resolve({ status, signal, stdout, stderr });
    }),
  );
  return { child, exited, output: () => stdout };
}

/**
 * runEntryPoint without blocking: for a process that talks to services running in this test's
 * own process (spawnSync would stall their event loop).
 */
export function spawnEntryPoint(
  file: string,
  args: string[],
  env: Record<string, string | undefined>,
): Promise<EntryPointResult> {
  return startEntryPoint(file, args, env).exited;
}
