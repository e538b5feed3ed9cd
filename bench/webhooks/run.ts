/**
 * bench/webhooks: fires delivered by the webhook dispatcher against the least work a delivery
 * needs, in the same run.
 *
 *   dispatcher: the webhook-dispatcher as its own process (production mode). CONCURRENCY
 *               producers each publish a catalog.change_instance.created event and wait until
 *               the local receiver got the webhook request it causes, then publish the next
 *               (a closed loop at concurrency CONCURRENCY); latency runs from the publish to the
 *               receiver.
 *   baseline:   the same producers, each doing only insert one response record, POST the body
 *               with undici, update the record (the mongodb driver, one shared client).
 *
 * Prints deliveries/s, latency p50/p99, database commands per delivery (the dispatcher's
 * db_commands_total, which comes from the driver's command monitoring; the baseline's own
 * command monitoring) and the dispatcher's RSS, with the ratio dispatcher/baseline.
 *
 *   recovery:   RECOVER FAILED responses of the webhook are written to its database
 *               (numbered after its schedule, as fires the target never took), then one
 *               `POST .../recover/` resends them all; prints resends delivered per second from the
 *               call to the last one at the receiver, the time to queue them (the recovery DONE)
 *               and the dispatcher's peak RSS during it (sampled every 250 ms). RECOVER=0 skips it.
 *
 *   pnpm bench:webhooks        (FIRES=n per round, CONCURRENCY=n, ROUNDS=n, RECOVER=n (10000); BENCH_DETAIL=1 prints
 *                               commands by name; DISPATCHER_NODE_ARGS="--cpu-prof ..." passes node
 *                               flags to the dispatcher)
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import amqp from 'amqplib';
import mongoose from 'mongoose';
import { request, Agent } from 'undici';
import { AMQP_SOCKET_OPTIONS, topologyNames } from '@pack/broker';
import { createEnvelope, events } from '@pack/contracts';
import { principalHeaders } from '@pack/http-kit';
import { dropDatabase, FakeSettings, resolveInfra } from '@pack/testkit';
import { prepareRuntime, runtimeEnv, runtimeFromEnv, serviceCommand } from '../crash-scenario/runtime';

const fires = Number(process.env.FIRES ?? 2000);
const concurrency = Number(process.env.CONCURRENCY ?? 20);
const rounds = Number(process.env.ROUNDS ?? 2);
const recoverCount = Number(process.env.RECOVER ?? 10_000);
const SERVICE_ID = 1;
const secret = randomBytes(24).toString('base64url');
const DISPATCHER_NODE_FLAGS = process.env.DISPATCHER_NODE_ARGS?.split(' ').filter(Boolean) ?? [];
const RUNTIME = runtimeFromEnv();

interface Round {
  perSecond: number;
  p50: number;
  p99: number;
  commandsPerDelivery: number;
}

/** The local target: answers 200 at once and resolves whoever waits for a message id. */
class Receiver {
  readonly waiting = new Map<string, () => void>();
  private server?: http.Server;
  url = '';

  async start(): Promise<this> {
    this.server = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        res.end('ok');
        const id = String(req.headers['webhook-id'] ?? req.headers['x-bench-id'] ?? '');
        this.waiting.get(id)?.();
        this.waiting.delete(id);
      });
    });
    this.server.keepAliveTimeout = 65_000;
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}/hook`;
    return this;
  }

  expect(id: string): Promise<void> {
    return new Promise((resolve) => this.waiting.set(id, resolve));
  }

  stop(): Promise<void> {
    this.server?.closeAllConnections();
    return new Promise((resolve) => this.server!.close(() => resolve()));
  }
}

const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!;

/** Runs `count` jobs on `concurrency` closed-loop workers; returns per-job latencies and wall time. */
async function closedLoop(
  count: number,
  job: (n: number) => Promise<void>,
): Promise<{ ms: number[]; wall: number }> {
  const latencies: number[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) {
        const n = next++;
        const t0 = performance.now();
        await job(n);
        latencies.push(performance.now() - t0);
      }
    }),
  );
  return { ms: latencies.sort((a, b) => a - b), wall: performance.now() - started };
}

async function dbCommands(url: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  return [...text.matchAll(/^db_commands_total\{[^}]*\} (\d+)/gm)].reduce((sum, m) => sum + Number(m[1]), 0);
}

/** The dispatcher's commands by name (BENCH_DETAIL=1): where the round trips go. */
async function commandBreakdown(url: string): Promise<string> {
  const text = await (await fetch(`${url}/metrics`)).text();
  const commands = [...text.matchAll(/^db_commands_total\{([^}]*)\} (\d+)/gm)].map((m) => `${m[1]} ${m[2]}`);
  const other = text.split('\n').filter((line) => /^(broker_consumed_total|webhook_\w+_total)\{/.test(line));
  return [...commands, ...other].join('\n');
}

async function cpuSeconds(url: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  return Number(/^process_cpu_seconds_total(?:\{[^}]*\})? (\S+)/m.exec(text)?.[1] ?? 0);
}

async function rssMb(url: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  return Number(/^process_resident_memory_bytes(?:\{[^}]*\})? (\S+)/m.exec(text)?.[1] ?? 0) / 1024 / 1024;
}

async function ready(url: string): Promise<void> {
  for (let i = 0; i < 300; i += 1) {
    if ((await fetch(`${url}/readyz`).catch(() => null))?.status === 200) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`${url} never became ready`);
}

async function main(): Promise<void> {
  const infra = await resolveInfra();
  const settings = await new FakeSettings().start();
  settings.document.external_api.webhook_rate_limit_per_minute = 100_000;
  const receiver = await new Receiver().start();
  const suffix = randomBytes(4).toString('hex');
  const env = {
    MONGO_URL: infra.mongoUrl,
    AMQP_URL: infra.amqpUrl,
    MONGO_DB: `bench_webhooks_${suffix}`,
    BROKER_NAMESPACE: `bench_${suffix}`,
    PORT: '0',
    HOST: '127.0.0.1',
    PACK_INTERNAL_SECRET: secret,
    PACK_ENCRYPTION_KEYS: `bench:${randomBytes(32).toString('base64')}`,
    PACK_ENCRYPTION_KEY_ID: 'bench',
    PACK_ALLOWED_TARGET_CIDRS: '127.0.0.0/8',
    SETTINGS_URL: settings.url,
  };
  const port = 18_085 + Math.floor(Math.random() * 1000);
  await prepareRuntime(RUNTIME);
  const child: ChildProcess = spawn(
    process.execPath,
    serviceCommand('webhook-dispatcher', RUNTIME, DISPATCHER_NODE_FLAGS),
    {
      env: {
        ...process.env,
        ...runtimeEnv(RUNTIME),
        ...env,
        PORT: String(port),
        LOG_LEVEL: 'warn',
        NODE_ENV: 'production',
      },
      stdio: ['ignore', 'ignore', 'inherit'],
    },
  );
  const url = `http://127.0.0.1:${port}`;
  const mongo = new mongoose.mongo.MongoClient(infra.mongoUrl, {
    monitorCommands: true,
    maxPoolSize: concurrency,
  });
  const amqpConnection = await amqp.connect(infra.amqpUrl, AMQP_SOCKET_OPTIONS);
  try {
    await ready(url);
    const exchange = topologyNames(env.BROKER_NAMESPACE).events;
    const channel = await amqpConnection.createConfirmChannel();
    await channel.assertExchange(exchange, 'topic', { durable: true });
    const publish = (envelope: ReturnType<typeof createEnvelope>) =>
      new Promise<void>((resolve, reject) =>
        channel.publish(
          exchange,
          envelope.type,
          Buffer.from(JSON.stringify(envelope)),
          { persistent: true, messageId: envelope.id },
          (error: unknown) => (error ? reject(new Error('the broker refused the event')) : resolve()),
        ),
      );
    const owner = { id: 10, name: 'bench-owner' };
    await publish(
      createEnvelope(
        events.serviceChanged,
        { service_id: SERVICE_ID, name: 'Bench', owner, deleted: false, version: Date.now() },
        { source: 'bench', correlationId: 'bench' },
      ),
    );
    const admin = { id: 1, username: 'bench', role: 'admin' as const };
    const path_ = '/v1/external/serviceowner/webhooks/';
    let webhookId = 0;
    for (let i = 0; i < 100 && !webhookId; i += 1) {
      const created = await fetch(`${url}${path_}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...principalHeaders(secret, 'POST', path_, admin) },
        body: JSON.stringify({
          name: 'bench',
          description: '',
          service: SERVICE_ID,
          target_url: receiver.url,
          authorization: 'Bearer bench',
        }),
      });
      if (created.status === 201) webhookId = ((await created.json()) as { id: number }).id;
      else await new Promise((resolve) => setTimeout(resolve, 100));
    }
    if (!webhookId) throw new Error('could not create the webhook');

    const fire = async () => {
      const envelope = createEnvelope(
        events.changeInstanceCreated,
        {
          change_instance_id: 1,
          service_item_id: 1,
          declaration_id: 1,
          declaration_json: '{}',
          consumer_id: 20,
          consumer_name: 'consumer',
          service: { id: SERVICE_ID, name: 'Bench', owner },
          state: 'PENDING',
          auto_approved: false,
        },
        { source: 'bench', correlationId: 'bench' },
      );
      const delivered = receiver.expect(`msg_${webhookId}_${envelope.id.replace(/[^A-Za-z0-9]/g, '')}`);
      await publish(envelope);
      await delivered;
    };

    const baselineDb = mongo.db(`bench_webhooks_baseline_${suffix}`).collection('responses');
    let baselineCommands = 0;
    mongo.on('commandStarted', () => (baselineCommands += 1));
    const agent = new Agent({ connections: concurrency });
    const body = JSON.stringify({ id: SERVICE_ID, name: 'Bench', owner, state: 'PENDING' });
    const baseline = async (n: number) => {
      const id = `${suffix}-${n}-${Math.random()}`;
      await baselineDb.insertOne({ _id: id as never, state: 'SCHEDULED', body, created_at: new Date() });
      const response = await request(receiver.url, {
        method: 'POST',
        dispatcher: agent,
        headers: { 'content-type': 'application/json', 'x-bench-id': id },
        body,
      });
      const text = await response.body.text();
      await baselineDb.updateOne(
        { _id: id as never },
        { $set: { state: 'OK', status_code: response.statusCode, response_body: text } },
      );
    };

    // Warm up both paths (connections, JIT, caches).
    await closedLoop(Math.min(200, fires), fire);
    await closedLoop(Math.min(200, fires), baseline);

    const results: { dispatcher: Round; baseline: Round }[] = [];
    const cpuMsPerDelivery: number[] = [];
    for (let round = 1; round <= rounds; round += 1) {
      const before = await dbCommands(url);
      const cpuBefore = await cpuSeconds(url);
      const d = await closedLoop(fires, fire);
      const dispatcherCommands = (await dbCommands(url)) - before;
      cpuMsPerDelivery.push((((await cpuSeconds(url)) - cpuBefore) * 1000) / fires);
      const baselineBefore = baselineCommands;
      const b = await closedLoop(fires, baseline);
      const summary = (run: { ms: number[]; wall: number }, commands: number): Round => ({
        perSecond: fires / (run.wall / 1000),
        p50: percentile(run.ms, 0.5),
        p99: percentile(run.ms, 0.99),
        commandsPerDelivery: commands / fires,
      });
      results.push({
        dispatcher: summary(d, dispatcherCommands),
        baseline: summary(b, baselineCommands - baselineBefore),
      });
    }
    const rss = await rssMb(url);
    if (process.env.BENCH_DETAIL) console.log(await commandBreakdown(url));
    const f = (n: number, digits = 1) => n.toFixed(digits);
    console.log(`\nbench/webhooks: ${fires} fires per round, concurrency ${concurrency}, ${rounds} rounds`);
    console.log('round | path       | deliveries/s | p50 ms | p99 ms | db cmds/delivery');
    results.forEach((r, i) => {
      for (const [name, x] of [
        ['dispatcher', r.dispatcher],
        ['baseline', r.baseline],
      ] as const)
        console.log(
          `${i + 1}     | ${name.padEnd(10)} | ${f(x.perSecond, 0).padStart(12)} | ${f(x.p50).padStart(6)} | ${f(x.p99).padStart(6)} | ${f(x.commandsPerDelivery, 2)}`,
        );
      console.log(
        `      | ratio      | ${f(r.dispatcher.perSecond / r.baseline.perSecond, 2).padStart(12)} |`,
      );
    });
    console.log(`dispatcher RSS after the run: ${f(rss, 0)} MB`);
    console.log(`dispatcher CPU per delivery: ${cpuMsPerDelivery.map((ms) => f(ms, 2)).join(', ')} ms`);
    await agent.close();
    if (recoverCount > 0) {
      const figure = await benchRecovery({ url, env, webhookId, receiver, settings, admin, owner, infra });
      console.log(
        `recovery of ${recoverCount} FAILED responses: ${f(figure.perSecond, 0)} resends/s delivered ` +
          `(${f(figure.queuedMs / 1000, 1)} s to queue them all, ${f(figure.deliveredMs / 1000, 1)} s to deliver), ` +
          `dispatcher RSS peak ${f(figure.rssPeak, 0)} MB (before ${f(figure.rssBefore, 0)} MB)`,
      );
    }
  } finally {
    child.kill('SIGTERM');
    await amqpConnection.close().catch(() => undefined);
    await mongo
      .db(`bench_webhooks_baseline_${suffix}`)
      .dropDatabase()
      .catch(() => undefined);
    await mongo.close();
    await dropDatabase(infra.mongoUrl, env.MONGO_DB).catch(() => undefined);
    await receiver.stop();
    await settings.stop();
    await infra.stop?.();
  }
}

interface RecoveryBench {
  url: string;
  env: { MONGO_DB: string; AMQP_URL: string; BROKER_NAMESPACE: string };
  webhookId: number;
  receiver: Receiver;
  settings: FakeSettings;
  admin: { id: number; username: string; role: 'admin' };
  owner: { id: number; name: string };
  infra: { mongoUrl: string };
}

/** Recovery: RECOVER FAILED responses written to the database, then one recover call. */
async function benchRecovery(bench: RecoveryBench) {
  const { url, webhookId, receiver, admin, owner } = bench;
  const client = new mongoose.mongo.MongoClient(bench.infra.mongoUrl);
  try {
    const db = client.db(bench.env.MONGO_DB);
    // The retention must keep the originals and their resends; a settings change reaches the
    // dispatcher by event (it refetches the document).
    await bench.settings.change(bench.env.AMQP_URL, bench.env.BROKER_NAMESPACE, (document) => {
      document.external_api.webhook_response_retention = 100_000;
    });
    await new Promise((resolve) => setTimeout(resolve, 1000));
    const schedule = await db
      .collection<{ _id: number; seq: number }>('webhook_schedules')
      .findOneAndUpdate({ _id: webhookId }, { $inc: { seq: recoverCount } }, { returnDocument: 'after' });
    const first = schedule!.seq - recoverCount + 1;
    const since = new Date();
    const body = { id: SERVICE_ID, name: 'Bench', owner, state: 'PENDING' };
    const ids: string[] = [];
    for (let n = 0; n < recoverCount; n += 1000) {
      const batch = Array.from({ length: Math.min(1000, recoverCount - n) }, (_, i) => {
        const at = new Date();
        const id = `msg_${webhookId}_failed${n + i}`;
        ids.push(id);
        return {
          _id: id,
          webhook_id: webhookId,
          seq: first + n + i,
          webhook_version: 1,
          state: 'FAILED',
          mode: 'submission',
          change_instance_id: 1,
          body,
          event_at: at,
          due_at: at,
          lease_until: null,
          lease_token: null,
          attempt_count: 1,
          attempts: [{ at, status_code: 503, error: null, duration_ms: 1 }],
          status_code: 503,
          response_body: 'down',
          response_truncated: false,
          error: null,
          resend_of: null,
          created_at: at,
          updated_at: at,
        };
      });
      await db.collection('webhook_responses').insertMany(batch as never[]);
    }
    const delivered = Promise.all(ids.map((id) => receiver.expect(id)));
    const rssBefore = await rssMb(url);
    let rssPeak = rssBefore;
    const sampler = setInterval(() => {
      void rssMb(url)
        .then((mb) => (rssPeak = Math.max(rssPeak, mb)))
        .catch(() => undefined);
    }, 250);
    const path_ = `/v1/external/serviceowner/webhooks/${webhookId}/recover/`;
    const started = performance.now();
    const answer = await fetch(`${url}${path_}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...principalHeaders(secret, 'POST', path_, admin) },
      body: JSON.stringify({ since: new Date(since.getTime() - 1000).toISOString() }),
    });
    const recovery = (await answer.json()) as { id: string; total: number };
    if (answer.status !== 202 || recovery.total !== recoverCount)
      throw new Error(`recover answered ${answer.status} ${JSON.stringify(recovery)}`);
    let queuedMs = 0;
    const progress = `/v1/external/serviceowner/webhooks/${webhookId}/recoveries/${recovery.id}/`;
    const watch = (async () => {
      for (;;) {
        const read = await fetch(`${url}${progress}`, {
          headers: principalHeaders(secret, 'GET', progress, admin),
        });
        const now = (await read.json()) as { state: string; resent: number };
        if (process.env.BENCH_DETAIL)
          console.log(`recovery ${now.state} ${now.resent}, ${receiver.waiting.size} not delivered`);
        if (now.state !== 'RUNNING') break;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
      queuedMs = performance.now() - started;
    })();
    await Promise.all([delivered, watch]);
    const deliveredMs = performance.now() - started;
    clearInterval(sampler);
    return { perSecond: recoverCount / (deliveredMs / 1000), queuedMs, deliveredMs, rssBefore, rssPeak };
  } finally {
    await client.close();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exit(1);
});
