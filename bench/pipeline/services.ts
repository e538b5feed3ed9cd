import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { events } from '@pack/contracts';
import { principalHeaders } from '@pack/http-kit';
import { answersReady, publishEvent, waitFor } from '@pack/testkit';
import { profileFlags } from './profile';
import { prepareRuntime, runtimeEnv, runtimeFromEnv, serviceCommand } from '../crash-scenario/runtime';

const ADMIN = { id: 1, username: 'bench', role: 'admin' as const };

export interface BenchService {
  name: string;
  url: string;
  database: string;
  process: ChildProcess;
  /** performance.now() when it was spawned (a profile's samples count from about then). */
  spawnedAt: number;
  /** Where its CPU profile goes (`--profile`), else undefined. */
  profileDir?: string;
}

/** The llm-gateway and the pipeline orchestrator as their own processes (production mode), one namespace. */
export class BenchServices {
  readonly secret = randomBytes(32).toString('base64url');
  readonly suffix = randomBytes(3).toString('hex');
  readonly namespace = `bench_pipeline_${this.suffix}`;
  readonly started: BenchService[] = [];
  /** Compiled bundles as deployed, or PACK_RUNTIME=source for the sources through tsx. */
  readonly runtime = runtimeFromEnv();

  constructor(
    private readonly mongoUrl: string,
    private readonly amqpUrl: string,
    /** The services act on nothing until they have read their settings (a fake settings service). */
    private readonly settingsUrl: string,
    /** With `--profile`: each service's CPU profile goes into a folder of its name here. */
    private readonly profileRoot?: string,
  ) {}

  async start(name: string, port: number, env: Record<string, string> = {}) {
    const database = `bench_${name.replace(/-/g, '_')}_${this.suffix}`;
    // e.g. NODE_ARGS_PIPELINE_ORCHESTRATOR="--cpu-prof --cpu-prof-dir=/tmp/prof" to profile one service.
    const nodeArgs = (process.env[`NODE_ARGS_${name.toUpperCase().replace(/-/g, '_')}`] ?? '')
      .split(' ')
      .filter(Boolean);
    const profileDir = this.profileRoot && path.join(this.profileRoot, name);
    if (profileDir) nodeArgs.push(...profileFlags(profileDir));
    await prepareRuntime(this.runtime);
    const spawnedAt = performance.now();
    const child = spawn(process.execPath, serviceCommand(name, this.runtime, nodeArgs), {
      env: {
        ...process.env,
        ...runtimeEnv(this.runtime),
        MONGO_URL: this.mongoUrl,
        AMQP_URL: this.amqpUrl,
        MONGO_DB: database,
        BROKER_NAMESPACE: this.namespace,
        PORT: String(port),
        METRICS_PORT: '0',
        PACK_INTERNAL_SECRET: this.secret,
        PACK_ENCRYPTION_KEYS: `bench:${randomBytes(32).toString('base64')}`,
        PACK_ALLOWED_TARGET_CIDRS: '127.0.0.0/8',
        SETTINGS_URL: this.settingsUrl,
        LOG_LEVEL: 'warn',
        NODE_ENV: 'production',
        ...env,
      },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    const service = {
      name,
      url: `http://127.0.0.1:${port}`,
      database,
      process: child,
      spawnedAt,
      profileDir,
    };
    this.started.push(service);
    await waitFor(() => answersReady(service.url), {
      timeoutMs: 60_000,
      what: `${name} ready`,
    });
    return service;
  }

  /** A call as the admin, past the gateway (signed principal headers). */
  async admin(service: BenchService, method: string, pathname: string, body: unknown) {
    const response = await fetch(`${service.url}${pathname}`, {
      method,
      headers: {
        'content-type': 'application/json',
        ...principalHeaders(this.secret, method, pathname, ADMIN),
      },
      body: JSON.stringify(body),
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  }

  /** Tells the orchestrator about a Service as the catalog would. */
  async publishService(serviceId: number): Promise<void> {
    await publishEvent(this.amqpUrl, this.namespace, events.serviceChanged, {
      service_id: serviceId,
      name: 'Bench service',
      owner: { id: 1, name: 'bench' },
      deleted: false,
      version: 1,
    });
  }

  async stop(): Promise<void> {
    for (const service of this.started) {
      service.process.kill('SIGTERM');
      await new Promise((resolve) =>
        service.process.exitCode !== null ? resolve(null) : service.process.on('exit', resolve),
      );
    }
  }
}
