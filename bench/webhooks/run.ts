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
 *   reference:  with `--against REV`, the dispatcher of commit REV (or of the checkout in the
 *               directory REV) beside this one, the two alternated round by round (reference.ts).
 *
 * Per round and side: deliveries/s, latency p50/p99, the ratio to the baseline of the same round,
 * the dispatcher's RSS, database commands per delivery (the dispatcher's db_commands_total, from
 * the driver's command monitoring; the baseline's own monitoring), and the CPU ms per delivery of
 * each process (/proc): the dispatcher, FerretDB, PostgreSQL, RabbitMQ and this process (the
 * producers and the receiver). The local servers are shared: what else runs on the machine is in
 * their figures too, so the idle rate measured before the rounds is printed with them.
 *
 *   recovery:   RECOVER FAILED responses of the webhook are written to its database, then one
 *               `POST .../recover/` resends them all (recovery.ts). RECOVER=0 skips it.
 *
 *   pnpm bench:webhooks [--profile] [--against REV]
 *     FIRES=n per round (2000), CONCURRENCY=n (20), ROUNDS=n (2, or 3 pairs with --against),
 *     RECOVER=n (10000), DISPATCHER_NODE_ARGS="..." (node flags for the dispatcher), REFERENCE_NODE_ARGS
 *     (the reference's, DISPATCHER_NODE_ARGS unless set: `--against .` then compares two flag sets).
 *     --profile: the dispatcher runs with --cpu-prof; after the rounds it is stopped (no recovery)
 *     and its profile's top self-time functions and packages are printed.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomBytes } from 'node:crypto';
import mongoose from 'mongoose';
import { request, Agent } from 'undici';
import { topologyNames } from '@pack/broker';
import { deleteQueues, FakeSettings, resolveInfra } from '@pack/testkit';
import { rssMb } from '../llm-gateway/measure';
import { prepareRuntime, runtimeFromEnv } from '../crash-scenario/runtime';
import { BenchDispatcher, OWNER, SERVICE_ID } from './dispatcher';
import { cpuBetween, formatCpu, readCpu } from './figures';
import { closedLoop, commandsByName, commandsPer, percentile, Receiver } from './load';
import { newestProfile, summarizeProfile } from './profile';
import { benchRecovery } from './recovery';
import { prepareReference, type Reference } from './reference';
import { CPU_ORDER, report, type Measurement } from './report';

const argv = process.argv.slice(2);
const profiling = argv.includes('--profile');
const against = argv.includes('--against') ? argv[argv.indexOf('--against') + 1] : undefined;
const fires = Number(process.env.FIRES ?? 2000);
const concurrency = Number(process.env.CONCURRENCY ?? 20);
const rounds = Number(process.env.ROUNDS ?? (against ? 3 : 2));
const recoverCount = profiling ? 0 : Number(process.env.RECOVER ?? 10_000);
const NODE_ARGS = process.env.DISPATCHER_NODE_ARGS?.split(' ').filter(Boolean) ?? [];
const REFERENCE_NODE_ARGS = process.env.REFERENCE_NODE_ARGS?.split(' ').filter(Boolean) ?? NODE_ARGS;
const IDLE_SECONDS = 3;

/** The least a delivery needs: insert a record, POST, update the record. */
function baselineJob(mongo: mongoose.mongo.MongoClient, database: string, receiver: Receiver) {
  const responses = mongo.db(database).collection('responses');
  const agent = new Agent({ connections: concurrency });
  const body = JSON.stringify({ id: SERVICE_ID, name: 'Bench', owner: OWNER, state: 'PENDING' });
  const job = async (n: number) => {
    const id = `${database}-${n}-${Math.random()}`;
    await responses.insertOne({ _id: id as never, state: 'SCHEDULED', body, created_at: new Date() });
    const response = await request(receiver.url, {
      method: 'POST',
      dispatcher: agent,
      headers: { 'content-type': 'application/json', 'x-bench-id': id },
      body,
    });
    const text = await response.body.text();
    await responses.updateOne(
      { _id: id as never },
      { $set: { state: 'OK', status_code: response.statusCode, response_body: text } },
    );
  };
  return { job, close: () => agent.close() };
}

interface Side {
  name: string;
  job: (n: number) => Promise<void>;
  pid?: number;
  commands: () => Promise<Map<string, number>>;
}

async function measure(side: Side, round: number): Promise<Measurement> {
  const commandsBefore = await side.commands();
  const processes = side.pid === undefined ? [] : [{ name: 'dispatcher', pid: side.pid }];
  const cpuBefore = readCpu(processes);
  const run = await closedLoop(fires, concurrency, side.job);
  const cpu = cpuBetween(cpuBefore, readCpu(processes), fires);
  return {
    side: side.name,
    round,
    perSecond: fires / (run.wall / 1000),
    p50: percentile(run.ms, 0.5),
    p99: percentile(run.ms, 0.99),
    commands: commandsPer(commandsBefore, await side.commands(), fires),
    cpu,
    rss: side.pid === undefined ? undefined : rssMb(side.pid),
  };
}

/** What the local servers spend while nothing is driven (other work on the machine), ms/s. */
async function idleRate(): Promise<string> {
  const before = readCpu([]);
  await new Promise((resolve) => setTimeout(resolve, IDLE_SECONDS * 1000));
  const used = cpuBetween(before, readCpu([]), IDLE_SECONDS);
  used.delete('bench');
  return formatCpu(used, CPU_ORDER, 0);
}

async function main(): Promise<void> {
  const infra = await resolveInfra();
  const settings = await new FakeSettings().start();
  settings.document.external_api.webhook_rate_limit_per_minute = 100_000;
  const receiver = await new Receiver().start();
  const secret = randomBytes(24).toString('base64url');
  const runtime = runtimeFromEnv();
  const profileDir = profiling ? mkdtempSync(path.join(tmpdir(), 'bench-webhooks-profile-')) : undefined;
  let reference: Reference | undefined;
  const dispatchers: BenchDispatcher[] = [];
  const mongo = new mongoose.mongo.MongoClient(infra.mongoUrl, {
    monitorCommands: true,
    maxPoolSize: concurrency,
  });
  const baselineDatabase = `bench_webhooks_baseline_${randomBytes(4).toString('hex')}`;
  const baseline = baselineJob(mongo, baselineDatabase, receiver);
  try {
    await prepareRuntime(runtime);
    if (against) reference = prepareReference(against);
    const common = {
      runtime,
      mongoUrl: infra.mongoUrl,
      amqpUrl: infra.amqpUrl,
      settingsUrl: settings.url,
      secret,
    };
    const profileArgs = profileDir ? ['--cpu-prof', `--cpu-prof-dir=${profileDir}`] : [];
    const current = new BenchDispatcher({
      ...common,
      label: 'dispatcher',
      nodeArgs: [...NODE_ARGS, ...profileArgs],
    });
    dispatchers.push(await current.start(receiver));
    if (reference)
      dispatchers.push(
        await new BenchDispatcher({
          ...common,
          label: `ref ${reference.commit}`,
          tree: reference.tree,
          nodeArgs: REFERENCE_NODE_ARGS,
        }).start(receiver),
      );
    const baselineCommands = new Map<string, number>();
    mongo.on('commandStarted', (event) =>
      baselineCommands.set(event.commandName, (baselineCommands.get(event.commandName) ?? 0) + 1),
    );
    const sides: Side[] = dispatchers.map((d) => ({
      name: d.label,
      job: () => d.fire(receiver),
      pid: d.pid,
      commands: () => commandsByName(d.url),
    }));
    const baselineSide: Side = {
      name: 'baseline',
      job: baseline.job,
      commands: async () => new Map(baselineCommands),
    };

    // Warm up every path (connections, JIT, caches).
    for (const side of [...sides, baselineSide])
      await closedLoop(Math.min(200, fires), concurrency, side.job);
    const idle = await idleRate();

    const measurements: Measurement[] = [];
    for (let round = 1; round <= rounds; round += 1) {
      // Which dispatcher goes first alternates: a drift within a round then favours neither.
      const order = round % 2 ? sides : [...sides].reverse();
      const measured: Measurement[] = [];
      for (const side of order) measured.push(await measure(side, round));
      const base = await measure(baselineSide, round);
      for (const m of measured) m.ratio = m.perSecond / base.perSecond;
      measurements.push(...measured, base);
    }
    const header =
      `bench/webhooks: ${fires} fires per round, concurrency ${concurrency}, ${rounds} rounds, ${runtime}, ${new Date().toISOString()}\n` +
      `local servers idle before the rounds, CPU ms/s: ${idle}`;
    process.stdout.write(report(measurements, header));
    if (profileDir) {
      await current.stop();
      const file = newestProfile(profileDir);
      process.stdout.write(file ? `${summarizeProfile(file)}\n` : `no profile written in ${profileDir}\n`);
    }
    if (recoverCount > 0) {
      const figure = await benchRecovery(current, receiver, settings, recoverCount);
      const f = (n: number, digits = 0) => n.toFixed(digits);
      process.stdout.write(
        `recovery of ${recoverCount} FAILED responses: ${f(figure.perSecond)} resends/s delivered ` +
          `(${f(figure.queuedMs / 1000, 1)} s to queue them all, ${f(figure.deliveredMs / 1000, 1)} s to deliver), ` +
          `dispatcher RSS peak ${f(figure.rssPeak)} MB (before ${f(figure.rssBefore)} MB)\n`,
      );
    }
  } finally {
    for (const dispatcher of dispatchers) {
      await dispatcher.stop();
      await dispatcher.dropDatabase();
      const names = topologyNames(dispatcher.env.BROKER_NAMESPACE!);
      const queues = ['change-instances', 'services', 'settings-cache']
        .map((name) => `webhook-dispatcher.${name}`)
        .flatMap((consumer) => [
          names.queue(consumer),
          names.retryQueue(consumer),
          names.deadLetterQueue(consumer),
        ]);
      await deleteQueues(infra.amqpUrl, queues).catch(() => undefined);
    }
    await baseline.close();
    await mongo
      .db(baselineDatabase)
      .dropDatabase()
      .catch(() => undefined);
    await mongo.close();
    await receiver.stop();
    await settings.stop();
    reference?.remove();
    await infra.stop?.();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
