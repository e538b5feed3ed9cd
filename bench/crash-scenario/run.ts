/**
 * bench/crash-scenario: a crash of every service in turn under load, as a bounded, repeatable run (docs/decisions/0018, 0028).
 *
 * The six services as separate processes (bench/crash-scenario/fleet.ts) on the shared RabbitMQ
 * and FerretDB, with their production defaults. A Service Owner's auto-approved Service with
 * active config, verify and execution processors on a model of a local OpenAI-shaped provider
 * that answers in 400 ms, and a webhook on APPROVED to a local receiver. 25 consumers each submit
 * one declaration (a group of them as each service is killed; again 1 s after a refusal) while the orchestrator, the
 * llm-gateway (while it holds provider calls), the webhook-dispatcher, the catalog and the
 * settings service are killed with SIGKILL in turn, each started again 2-3 s later.
 *
 * Prints: pipelines ended OK / FAILED / stuck, provider calls made and repeated, webhooks
 * received (once each?), submissions refused (by status) while a service was down, the slowest
 * stage and the total time; exits 1 when a pipeline failed or stuck or a webhook did not arrive
 * exactly once. Without the lease takeover and stage resends of 0018 and 0028: 18 of 25 OK.
 *
 *   pnpm bench:crash     (CONSUMERS=25  CRASH_WAIT_S=150 for the pipelines to end  CRASH_LOG_LEVEL=info)
 *   pnpm bench:crash --database-restart   (or pnpm bench:db-restart) the database instead of the
 *       services: bench/crash-scenario/database-restart.ts; fails also on any 500.
 */
import os from 'node:os';
import path from 'node:path';
import { exported, infraScript, Receiver, startFakeOpenAi, type FakeProviderServer } from '@pack/testkit';
import { callKey } from '../../test/pipeline-actors';
import { DATABASE_STEPS, restartDatabaseInTurn, startBenchDatabase } from './database-restart';
import { prepareRuntime, runBench, runtimeFromEnv } from './runtime';
import { Fleet, type ServiceName } from './fleet';
import { CONSUMERS, KEY, outcome, setUp, submitDeclaration } from './scenario';

const WAIT_S = Number(process.env.CRASH_WAIT_S ?? 150);
const DATABASE_RESTART = process.argv.includes('--database-restart');
const KILLED: ServiceName[] = [
  'pipeline-orchestrator',
  'llm-gateway',
  'webhook-dispatcher',
  'catalog',
  'settings',
];
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const log = (line: string) => process.stderr.write(`[crash] ${line}\n`);

/**
 * Each consumer submits once; a refused submission is tried again 1 s later. The consumers come
 * in one group per killed service, the group starting as its service is killed, one consumer
 * every 0.5 s: submissions meet every outage however long a loaded machine takes to restart.
 */
async function submitAll(
  gw: string,
  service: number,
  consumers: string[],
  down: () => string[],
  killed: Promise<void>[],
) {
  const items: number[] = [];
  const refused = new Map<string, number>();
  let next = 0;
  const submitters = consumers.map(async (token, i) => {
    const group = Math.floor((i * killed.length) / consumers.length);
    await killed[group];
    await sleep((i - Math.ceil((group * consumers.length) / killed.length)) * 500);
    items[i] = await submitDeclaration(gw, service, token, i, refused, (status) => {
      return `${status} while ${down().join('+') || 'nothing'} was down`;
    });
    next += 1;
  });
  await Promise.all(submitters);
  return { items, refused, accepted: next };
}

/** Whether the llm-gateway holds a claim (not finished) whose request the provider has got. */
async function callAtProvider(fleet: Fleet, fake: FakeProviderServer): Promise<boolean> {
  const open = await fleet.collection('llm-gateway', 'llm_call_claims', async (claims) => {
    const all = await claims.find({}).toArray();
    const finished = await fleet.collection('llm-gateway', 'llm_calls', (calls) =>
      calls.find({ _id: { $in: all.map((claim) => claim._id) } }, { projection: { _id: 1 } }).toArray(),
    );
    const done = new Set(finished.map((call) => String(call._id)));
    return all.filter((claim) => !done.has(String(claim._id)));
  });
  const atProvider = new Set(fake.requestsTo('/chat/completions').map(callKey));
  for (const claim of open) {
    const [pipeline, processor] = await Promise.all([
      fleet.collection('pipeline-orchestrator', 'pipelines', (c) =>
        c.findOne({ _id: claim.pipeline_id as never }),
      ),
      fleet.collection('pipeline-orchestrator', 'ai_processors', (c) =>
        c.findOne({ _id: claim.processor_id as never }),
      ),
    ]);
    if (atProvider.has(`${pipeline?.service_item_id}/${processor?.kind}`)) return true;
  }
  return false;
}

/** Kills each service in turn (the llm-gateway while a call of it is at the provider) and starts it 2-3 s later. */
async function killInTurn(fleet: Fleet, fake: FakeProviderServer, down: Set<string>, killed: (() => void)[]) {
  const outages: string[] = [];
  await sleep(3000);
  for (const name of KILLED) {
    // Its group of consumers starts now: for the llm-gateway, their pipelines make the calls it
    // is killed in the middle of (the earlier groups' may be over by then).
    killed[KILLED.indexOf(name)]!();
    if (name === 'llm-gateway') {
      const deadline = Date.now() + 30_000;
      while (!(await callAtProvider(fleet, fake)) && Date.now() < deadline) await sleep(20);
    }
    const killedAt = Date.now();
    await fleet.kill(name);
    down.add(name);
    await sleep(2000 + Math.random() * 1000);
    const restartedAt = Date.now();
    await fleet.restart(name);
    down.delete(name);
    outages.push(
      `${name}: killed, started again after ${((restartedAt - killedAt) / 1000).toFixed(1)} s, ` +
        `ready after ${((Date.now() - killedAt) / 1000).toFixed(1)} s`,
    );
    log(outages[outages.length - 1]!);
    await sleep(2000);
  }
  return outages;
}

async function main(): Promise<void> {
  const started = Date.now();
  const env = process.env.MONGO_URL && process.env.AMQP_URL ? undefined : infraScript(['up']);
  const pair = DATABASE_RESTART ? await startBenchDatabase() : undefined;
  const urls = {
    MONGO_URL: pair?.url ?? process.env.MONGO_URL ?? exported(env!, 'MONGO_URL'),
    AMQP_URL: process.env.AMQP_URL ?? exported(env!, 'AMQP_URL'),
  };
  const fleet = new Fleet(urls, path.join(os.tmpdir(), `bench-crash-${Date.now()}`), runtimeFromEnv());
  await prepareRuntime(fleet.runtime);
  const [fake, receiver] = await Promise.all([startFakeOpenAi({ apiKey: KEY }), new Receiver().start()]);
  fake.always({ latencyMs: 400 });
  let failed = true;
  for (const signal of ['SIGINT', 'SIGTERM'] as const)
    process.once(signal, () => {
      log(`${signal}: stopping the services and removing their databases and queues`);
      void Promise.all([fake.close(), receiver.stop(), fleet.stop()])
        .then(() => pair?.stop())
        .finally(() => process.exit(130));
    });
  try {
    log(`starting six services (logs in ${fleet.logDir})`);
    await fleet.start();
    const { owner, consumers, service } = await setUp(fleet, fake, receiver, CONSUMERS);
    log(`set up: Service ${service}, ${consumers.length} consumers; submitting and killing`);
    const loadStarted = Date.now();
    const down = new Set<string>();
    const killed: (() => void)[] = [];
    const steps = DATABASE_RESTART ? DATABASE_STEPS : KILLED;
    const kills = steps.map(() => new Promise<void>((resolve) => killed.push(resolve)));
    const [submitted, outages] = await Promise.all([
      submitAll(fleet.url('gateway'), service, consumers, () => [...down], kills),
      pair ? restartDatabaseInTurn(fleet, pair, down, killed) : killInTurn(fleet, fake, down, killed),
    ]);
    log(`all ${submitted.accepted} submissions accepted; waiting up to ${WAIT_S} s for the pipelines`);

    const { states, lastEnded, count, perCall, repeats } = await outcome(
      fleet,
      owner,
      submitted.items,
      fake,
      receiver,
      WAIT_S,
    );
    const hooks = [...receiver.countsById().values()];
    const stageSeconds = [...states.values()]
      .flatMap((s) => s.stages)
      .filter((s) => s.started_at && s.finished_at)
      .map((s) => (Date.parse(s.finished_at) - Date.parse(s.started_at)) / 1000);
    const problems = [...states.entries()]
      .filter(([, s]) => s.state !== 'OK')
      .map(
        ([item, s]) => `  item ${item}: ${JSON.stringify(s.stages.map((x) => [x.stage, x.state, x.error]))}`,
      );
    const calls = await fleet.collection('llm-gateway', 'llm_calls', async (collection) => ({
      takenOver: await collection.countDocuments({ takeovers: { $gte: 1 } }),
      attempts: (await collection.find({}, { projection: { attempts: 1 } }).toArray()).reduce(
        (sum, record) => sum + Number(record.attempts ?? 1),
        0,
      ),
    }));
    const once = hooks.length === submitted.items.length && hooks.every((n) => n === 1);
    const instances = await fleet.collection('catalog', 'change_instances', (c) => c.countDocuments({}));
    process.stdout.write(
      [
        `bench/crash-scenario: ${CONSUMERS} consumers, ${DATABASE_RESTART ? 'the database restarted (FerretDB -9, then PostgreSQL)' : 'each service killed once with -9'}, ${new Date().toISOString()}, load average ${os.loadavg()[0]!.toFixed(1)}`,
        ...outages.map((line) => `  ${line}`),
        `pipelines: ${count('OK')} OK, ${count('FAILED')} FAILED, ${count(undefined)} stuck (of ${submitted.items.length}; without the takeover and resends of 0018 and 0028: 18 OK, 7 FAILED)`,
        ...problems,
        `provider calls: ${fake.requestsTo('/chat/completions').length} made for ${perCall.size} stages, ` +
          `${repeats.length} stages called more than once (${repeats.reduce((a, n) => a + n - 1, 0)} extra calls); ` +
          `the llm-gateway recorded ${calls.attempts} attempts, ${calls.takenOver} calls taken over from a dead owner`,
        `webhooks: ${receiver.requests.length} received for ${hooks.length} fires of ${submitted.items.length} approvals; ` +
          `exactly once each: ${once ? 'yes' : 'NO'}; the catalog holds ${instances} Change Instances`,
        `submissions refused: ${[...submitted.refused.entries()].map(([k, n]) => `${n} x ${k}`).join(', ') || 'none'}`,
        `slowest stage: ${Math.max(0, ...stageSeconds).toFixed(1)} s`,
        `time: ${((lastEnded - loadStarted) / 1000).toFixed(1)} s from the first submission to the last pipeline ended, ` +
          `${((Date.now() - started) / 1000).toFixed(1)} s in all`,
        '',
      ].join('\n'),
    );
    const errors = [...submitted.refused.keys()].filter(
      (key) => /^(5\d\d|0) /.test(key) && !key.startsWith('503'),
    );
    failed = count('OK') !== submitted.items.length || !once || (DATABASE_RESTART && errors.length > 0);
  } finally {
    await fake.close();
    await receiver.stop();
    await fleet.stop();
    await pair?.stop();
  }
  process.exit(failed ? 1 : 0);
}

runBench(main);
