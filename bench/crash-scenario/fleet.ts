/**
 * The six services of the platform, each as its own process on fixed loopback ports, that the
 * crash scenario kills with SIGKILL and starts again on the same ports (the gateway and the other
 * services keep their URLs). Every process logs to its own file under `logDir`.
 */
import { execFileSync, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { createWriteStream, mkdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import amqp from 'amqplib';
import mongoose, { type mongo } from 'mongoose';
import { dropDatabase, exported, freePort, infraScript } from '@pack/testkit';
import { prepareRuntime, runtimeFromEnv, spawnService, type Runtime } from './runtime';

/** Start order: what the others read at start first (settings), the gateway last. */
export const SERVICES = [
  'settings',
  'catalog',
  'llm-gateway',
  'pipeline-orchestrator',
  'webhook-dispatcher',
  'gateway',
] as const;
export type ServiceName = (typeof SERVICES)[number];

const URL_VARIABLES: Partial<Record<ServiceName, string>> = {
  settings: 'SETTINGS_URL',
  catalog: 'CATALOG_URL',
  'llm-gateway': 'LLM_GATEWAY_URL',
  'pipeline-orchestrator': 'PIPELINE_ORCHESTRATOR_URL',
  'webhook-dispatcher': 'WEBHOOK_DISPATCHER_URL',
};

interface Member {
  env: Record<string, string>;
  port: number;
  child?: ChildProcess;
  exited?: Promise<void>;
  starts: number;
  spawnedAt?: number;
  /** From spawn to /readyz answering 200, the last start. */
  readyAfterMs?: number;
}

export class Fleet {
  readonly namespace = `bench_crash_${Date.now().toString(36)}${randomBytes(2).toString('hex')}`;
  readonly adminToken = `pack_${randomBytes(32).toString('base64url')}`;
  private readonly members = new Map<ServiceName, Member>();

  constructor(
    private readonly infra: { MONGO_URL: string; AMQP_URL: string },
    readonly logDir: string,
    /** How each service runs: its compiled bundle (as the image does) or its sources through tsx. */
    readonly runtime: Runtime = 'compiled',
  ) {
    mkdirSync(logDir, { recursive: true });
  }

  /**
   * A bench's fleet: on MONGO_URL and AMQP_URL when set, else on what scripts/infra.sh starts;
   * the runtime PACK_RUNTIME asks for, its bundles built if stale; logs under the temporary directory.
   */
  static async forBench(name: string): Promise<Fleet> {
    const env = process.env.MONGO_URL && process.env.AMQP_URL ? undefined : infraScript(['up']);
    const urls = {
      MONGO_URL: process.env.MONGO_URL ?? exported(env!, 'MONGO_URL'),
      AMQP_URL: process.env.AMQP_URL ?? exported(env!, 'AMQP_URL'),
    };
    const fleet = new Fleet(urls, path.join(os.tmpdir(), `bench-${name}-${Date.now()}`), runtimeFromEnv());
    await prepareRuntime(fleet.runtime);
    return fleet;
  }

  url(name: ServiceName): string {
    return `http://127.0.0.1:${this.members.get(name)!.port}`;
  }

  private stopping = false;
  private readonly connections = new Map<ServiceName, Promise<mongoose.Connection>>();

  /** The service's internal metrics endpoint (Prometheus text). */
  metricsUrl(name: ServiceName): string {
    return `http://127.0.0.1:${this.members.get(name)!.env.METRICS_PORT}/metrics`;
  }

  /** The service's database (one connection per database, kept). */
  async database(name: ServiceName): Promise<mongo.Db> {
    let connection = this.connections.get(name);
    if (!connection) {
      const dbName = this.members.get(name)!.env.MONGO_DB;
      connection = mongoose.createConnection(this.infra.MONGO_URL, { dbName }).asPromise();
      this.connections.set(name, connection);
    }
    return (await connection).db!;
  }

  /** Runs `read` on a collection of the service's database. */
  async collection<T>(
    name: ServiceName,
    collection: string,
    read: (c: mongo.Collection) => Promise<T>,
  ): Promise<T> {
    return read((await this.database(name)).collection(collection));
  }

  /** Chooses ports and variables for every service and starts them all; resolves when all are ready. */
  async start(extraEnv: Partial<Record<ServiceName, Record<string, string>>> = {}): Promise<void> {
    const shared: Record<string, string> = {
      NODE_ENV: 'production',
      LOG_LEVEL: process.env.CRASH_LOG_LEVEL ?? 'info',
      HOST: '127.0.0.1',
      MONGO_URL: this.infra.MONGO_URL,
      AMQP_URL: this.infra.AMQP_URL,
      BROKER_NAMESPACE: this.namespace,
      PACK_INTERNAL_SECRET: randomBytes(32).toString('base64url'),
      PACK_ENCRYPTION_KEYS: `bench:${randomBytes(32).toString('base64')}`,
      PACK_ENCRYPTION_KEY_ID: 'bench',
      // The fake provider and the webhook receiver listen on loopback.
      PACK_ALLOWED_TARGET_CIDRS: '127.0.0.0/8,::1/128',
      PACK_ADMIN_TOKEN: this.adminToken,
    };
    // Twelve different ports (freePort may hand out one it gave before: two services would then
    // share one, and the readiness probe of the one that failed would reach the other).
    const taken = new Set<number>();
    const port = async () => {
      for (;;) {
        const candidate = await freePort();
        if (!taken.has(candidate)) return taken.add(candidate) && candidate;
      }
    };
    const ports = new Map<ServiceName, [number, number]>();
    for (const name of SERVICES) ports.set(name, [await port(), await port()]);
    for (const name of SERVICES) {
      const variable = URL_VARIABLES[name];
      if (variable) shared[variable] = `http://127.0.0.1:${ports.get(name)![0]}`;
    }
    for (const name of SERVICES) {
      const [port, metricsPort] = ports.get(name)!;
      this.members.set(name, {
        port,
        starts: 0,
        env: {
          ...shared,
          PORT: String(port),
          METRICS_PORT: String(metricsPort),
          MONGO_DB: `${this.namespace}_${name.replace(/-/g, '_')}`,
          ...extraEnv[name],
        },
      });
    }
    for (const name of SERVICES) this.spawn(name);
    await Promise.all(SERVICES.map((name) => this.ready(name)));
  }

  private spawn(name: ServiceName): void {
    if (this.stopping) throw new Error(`not starting ${name}: the fleet is stopping`);
    const member = this.members.get(name)!;
    member.starts += 1;
    member.spawnedAt = Date.now();
    const log = createWriteStream(path.join(this.logDir, `${name}.log`), { flags: 'a' });
    log.write(`--- start ${member.starts} at ${new Date().toISOString()}\n`);
    // NODE_ARGS (every service) and NODE_ARGS_<NAME> (one) add node flags, e.g. to measure one.
    const nodeArgs = [
      process.env.NODE_ARGS,
      process.env[`NODE_ARGS_${name.toUpperCase().replace(/-/g, '_')}`],
    ]
      .join(' ')
      .split(' ')
      .filter(Boolean);
    // The function `pnpm start` starts each service with: the same command, flags and variables.
    const child = spawnService(name, this.runtime, {
      env: { PATH: process.env.PATH, ...member.env },
      nodeArgs,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout!.pipe(log, { end: false });
    child.stderr!.pipe(log, { end: false });
    member.child = child;
    member.exited = new Promise((resolve) => child.once('close', () => resolve()));
  }

  /** Resolves once the service answers 200 on /readyz (120 s at most: a loaded machine compiles slowly). */
  async ready(name: ServiceName): Promise<void> {
    const deadline = Date.now() + 120_000;
    const member = this.members.get(name)!;
    for (;;) {
      const answer = await fetch(`${this.url(name)}/readyz`).catch(() => null);
      if (answer?.status === 200 && member.child?.exitCode === null) {
        member.readyAfterMs = Date.now() - member.spawnedAt!;
        return;
      }
      if (member.child?.exitCode !== null || Date.now() > deadline)
        throw new Error(`${name} did not get ready (log: ${path.join(this.logDir, `${name}.log`)})`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }

  /** How many times the service's process was started (1: never restarted) and whether it runs now. */
  process(name: ServiceName): { starts: number; running: boolean } {
    const member = this.members.get(name)!;
    return { starts: member.starts, running: member.child?.exitCode === null && !member.child.signalCode };
  }

  /** Milliseconds from its last start to ready. */
  readyAfterMs(name: ServiceName): number | undefined {
    return this.members.get(name)!.readyAfterMs;
  }

  /** The process id of the running service (to read its resident memory). */
  pid(name: ServiceName): number | undefined {
    return this.members.get(name)!.child?.pid;
  }

  /** SIGKILL, as a lost node or the OOM killer would; resolves once the process is gone. */
  async kill(name: ServiceName): Promise<void> {
    const member = this.members.get(name)!;
    member.child!.kill('SIGKILL');
    await member.exited;
  }

  /** Starts the service again on its ports; resolves once it is ready. */
  async restart(name: ServiceName): Promise<void> {
    this.spawn(name);
    await this.ready(name);
  }

  /** Stops every process (SIGTERM, SIGKILL after 30 s) and removes the databases and queues. */
  async stop(): Promise<void> {
    this.stopping = true;
    await Promise.all(
      [...this.members.values()].map(async (member) => {
        if (!member.child || member.child.exitCode !== null || member.child.signalCode !== null) return;
        const force = setTimeout(() => member.child!.kill('SIGKILL'), 30_000);
        member.child.kill('SIGTERM');
        await member.exited;
        clearTimeout(force);
      }),
    );
    for (const connection of this.connections.values()) await (await connection).close();
    for (const member of this.members.values())
      await dropDatabase(this.infra.MONGO_URL, member.env.MONGO_DB!).catch(() => undefined);
    // A throw-away cluster's (bench/cluster) goes with it.
    if (!this.infra.AMQP_URL.includes(',')) await this.deleteTopology();
  }

  /** The namespace's queues (as rabbitmqctl lists them) and its two exchanges. */
  private async deleteTopology(): Promise<void> {
    let queues: string[] = [];
    try {
      queues = execFileSync('rabbitmqctl', ['-q', 'list_queues', 'name'], {
        encoding: 'utf8',
        timeout: 60_000,
      })
        .split('\n')
        .map((line) => line.trim())
        .filter((name) => name.startsWith(`${this.namespace}.`));
    } catch {
      process.stderr.write(`[crash] could not list queues; those of ${this.namespace}.* are left\n`);
    }
    const connection = await amqp.connect(this.infra.AMQP_URL);
    try {
      for (const name of [...queues, `${this.namespace}.events`, `${this.namespace}.dlx`]) {
        const channel = await connection.createChannel();
        channel.on('error', () => undefined);
        const remove = name.endsWith('.events') || name.endsWith('.dlx') ? 'deleteExchange' : 'deleteQueue';
        await channel[remove](name).catch(() => undefined);
        await channel.close().catch(() => undefined);
      }
    } finally {
      await connection.close();
    }
  }
}
