/**
 * One webhook-dispatcher as its own process (production mode, this checkout's bundle or another
 * tree's), in its own database and broker namespace, with one webhook on the bench's receiver;
 * `fire` publishes a catalog.change_instance.created event and resolves when the receiver got the
 * webhook request it causes.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import amqp, { type ChannelModel, type ConfirmChannel } from 'amqplib';
import { AMQP_SOCKET_OPTIONS, topologyNames } from '@pack/broker';
import { createEnvelope, events } from '@pack/contracts';
import { principalHeaders } from '@pack/http-kit';
import { dropDatabase, waitFor } from '@pack/testkit';
import { publishConfirmed } from '../llm-gateway/measure';
import { PRODUCTION_NODE_FLAGS, runtimeEnv, serviceCommand, type Runtime } from '../crash-scenario/runtime';
import type { Receiver } from './load';

export const SERVICE_ID = 1;
export const OWNER = { id: 10, name: 'bench-owner' };
export const ADMIN = { id: 1, username: 'bench', role: 'admin' as const };

export interface DispatcherOptions {
  label: string;
  /** Another checkout whose compiled bundle runs (built there); this checkout's when absent. */
  tree?: string;
  runtime: Runtime;
  nodeArgs: string[];
  mongoUrl: string;
  amqpUrl: string;
  settingsUrl: string;
  secret: string;
}

export class BenchDispatcher {
  readonly suffix = randomBytes(4).toString('hex');
  readonly env: Record<string, string>;
  readonly port = 18_085 + Math.floor(Math.random() * 1000);
  readonly url = `http://127.0.0.1:${this.port}`;
  webhookId = 0;
  private child?: ChildProcess;
  private connection?: ChannelModel;
  private channel?: ConfirmChannel;

  constructor(readonly options: DispatcherOptions) {
    this.env = {
      MONGO_URL: options.mongoUrl,
      AMQP_URL: options.amqpUrl,
      MONGO_DB: `bench_webhooks_${this.suffix}`,
      BROKER_NAMESPACE: `bench_${this.suffix}`,
      PORT: String(this.port),
      METRICS_PORT: '0',
      HOST: '127.0.0.1',
      PACK_INTERNAL_SECRET: options.secret,
      PACK_ENCRYPTION_KEYS: `bench:${randomBytes(32).toString('base64')}`,
      PACK_ENCRYPTION_KEY_ID: 'bench',
      PACK_ALLOWED_TARGET_CIDRS: '127.0.0.0/8',
      SETTINGS_URL: options.settingsUrl,
      LOG_LEVEL: 'warn',
      NODE_ENV: 'production',
    };
  }

  get label(): string {
    return this.options.label;
  }

  get pid(): number | undefined {
    return this.child?.pid;
  }

  get exchange(): string {
    return topologyNames(this.env.BROKER_NAMESPACE!).events;
  }

  async start(receiver: Receiver): Promise<this> {
    const { tree, runtime, nodeArgs } = this.options;
    const args = tree
      ? [...PRODUCTION_NODE_FLAGS, ...nodeArgs, path.join(tree, 'services/webhook-dispatcher/dist/main.js')]
      : serviceCommand('webhook-dispatcher', runtime, nodeArgs);
    this.child = spawn(process.execPath, args, {
      cwd: tree,
      env: { ...process.env, ...runtimeEnv(tree ? 'compiled' : runtime), ...this.env },
      stdio: ['ignore', 'ignore', 'inherit'],
    });
    await waitFor(async () => (await fetch(`${this.url}/readyz`).catch(() => null))?.status === 200, {
      timeoutMs: 60_000,
      what: `${this.label} ready`,
    });
    this.connection = await amqp.connect(this.options.amqpUrl, AMQP_SOCKET_OPTIONS);
    this.channel = await this.connection.createConfirmChannel();
    await this.channel.assertExchange(this.exchange, 'topic', { durable: true });
    await publishConfirmed(
      this.channel,
      this.exchange,
      createEnvelope(
        events.serviceChanged,
        { service_id: SERVICE_ID, name: 'Bench', owner: OWNER, deleted: false, version: Date.now() },
        { source: 'bench', correlationId: 'bench' },
      ),
    );
    // The Service reaches the dispatcher by event: the webhook is refused until it has.
    await waitFor(async () => (this.webhookId = await this.createWebhook(receiver.url)) > 0, {
      timeoutMs: 10_000,
      what: `${this.label}: the bench webhook`,
    });
    return this;
  }

  private async createWebhook(target: string): Promise<number> {
    const pathname = '/v1/external/serviceowner/webhooks/';
    const created = await fetch(`${this.url}${pathname}`, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        ...principalHeaders(this.options.secret, 'POST', pathname, ADMIN),
      },
      body: JSON.stringify({
        name: 'bench',
        description: '',
        service: SERVICE_ID,
        target_url: target,
        authorization: 'Bearer bench',
      }),
    });
    return created.status === 201 ? ((await created.json()) as { id: number }).id : 0;
  }

  /** Publishes a Change Instance creation and waits until its webhook request reached the receiver. */
  async fire(receiver: Receiver): Promise<void> {
    const envelope = createEnvelope(
      events.changeInstanceCreated,
      {
        change_instance_id: 1,
        service_item_id: 1,
        declaration_id: 1,
        declaration_json: '{}',
        consumer_id: 20,
        consumer_name: 'consumer',
        service: { id: SERVICE_ID, name: 'Bench', owner: OWNER },
        state: 'PENDING',
        auto_approved: false,
      },
      { source: 'bench', correlationId: 'bench' },
    );
    const delivered = receiver.expect(`msg_${this.webhookId}_${envelope.id.replace(/[^A-Za-z0-9]/g, '')}`);
    await publishConfirmed(this.channel!, this.exchange, envelope);
    await delivered;
  }

  /** Stops the process (gracefully: a CPU profile is written on exit) and waits for it. */
  async stop(): Promise<void> {
    const child = this.child;
    if (child && child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    }
    await this.connection?.close().catch(() => undefined);
    this.connection = undefined;
  }

  async dropDatabase(): Promise<void> {
    await dropDatabase(this.options.mongoUrl, this.env.MONGO_DB!).catch(() => undefined);
  }
}
