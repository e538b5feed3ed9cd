/**
 * bench/cluster: "losing a node loses nothing", against a three-node RabbitMQ cluster
 * (scripts/rabbit-cluster.sh, ports 5681-5683; docs/decisions/0049).
 *
 * The crash scenario's load (bench/crash-scenario: the six services as processes with their
 * production defaults, 25 consumers' declarations through three stages on a 400 ms provider, a
 * webhook on every approval) while the broker, not the services, is hurt:
 *   1. kill -9 of the node that leads the most quorum queues; it is started again 10 s later;
 *   2. a rolling restart: each node in turn stopped (rabbitmqctl stop) and started again.
 * The consumers submit one every 0.5 s through both phases (again 1 s after a refusal).
 *
 * Prints per phase how many service connections the node had and how long until every service
 * answered /readyz again; then pipelines OK / FAILED / stuck, provider calls made and repeated,
 * webhooks (exactly once each?), refusals, and whether every shared queue has a consumer.
 * Exits 1 when a pipeline did not end OK, a webhook did not arrive exactly once, or a queue has
 * no consumer.
 *
 *   pnpm bench:cluster     (CONSUMERS=25  CRASH_WAIT_S=150  PACK_CLUSTER_PORT=5681)
 */
import os from 'node:os';
import path from 'node:path';
import { exported, infraScript, Receiver, REPO_ROOT, startFakeOpenAi } from '@pack/testkit';
import { consumersPerQueue, NODE_IDS, RabbitCluster } from '../../test/rabbit-cluster';
import { Fleet, SERVICES } from '../crash-scenario/fleet';
import { prepareRuntime, runtimeFromEnv } from '../crash-scenario/runtime';
import { KEY, outcome, setUp } from '../crash-scenario/scenario';
import { submitEvery } from './submit';

const WAIT_S = Number(process.env.CRASH_WAIT_S ?? 150);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const log = (line: string) => process.stderr.write(`[cluster] ${line}\n`);

/** Seconds from `since` until every service answers /readyz (its broker connected included). */
async function allReady(fleet: Fleet, since: number): Promise<string> {
  await Promise.all(SERVICES.map((name) => fleet.ready(name)));
  return ((Date.now() - since) / 1000).toFixed(1);
}

async function hurt(cluster: RabbitCluster, fleet: Fleet): Promise<string[]> {
  const lines: string[] = [];
  await sleep(3000);
  const { most, counts } = cluster.leaders();
  const live = NODE_IDS.find((node) => node !== most)!;
  const dropped = cluster.connectionsPerNode(live)[most] ?? 0;
  const killedAt = Date.now();
  cluster.kill(most);
  await sleep(500);
  lines.push(
    `kill -9 of node ${most} (it led ${counts[most] ?? 0} quorum queues of ${Object.values(counts).reduce((a, n) => a + n, 0)}, ` +
      `${dropped} service connections): every service ready again ${await allReady(fleet, killedAt)} s after`,
  );
  log(lines[lines.length - 1]!);
  await sleep(Math.max(0, killedAt + 10_000 - Date.now()));
  cluster.start(most);
  lines.push(
    `node ${most} started again after ${((Date.now() - killedAt) / 1000).toFixed(1)} s (it rejoined)`,
  );
  log(lines[lines.length - 1]!);
  for (const node of NODE_IDS) {
    await sleep(3000);
    const other = NODE_IDS.find((candidate) => candidate !== node)!;
    const had = cluster.connectionsPerNode(other)[node] ?? 0;
    const stoppedAt = Date.now();
    cluster.stop(node);
    await sleep(500);
    const readyAfter = await allReady(fleet, stoppedAt);
    cluster.start(node);
    lines.push(
      `rolling restart, node ${node} (${had} service connections): stopped, every service ready again ` +
        `${readyAfter} s after, node back after ${((Date.now() - stoppedAt) / 1000).toFixed(1)} s`,
    );
    log(lines[lines.length - 1]!);
  }
  return lines;
}

async function main(): Promise<void> {
  const started = Date.now();
  const cluster = new RabbitCluster(
    path.join(REPO_ROOT, '.local/rabbit-cluster'),
    Number(process.env.PACK_CLUSTER_PORT ?? 5681),
  );
  log('starting the three-node cluster');
  const amqpUrl = cluster.up();
  const mongoUrl = process.env.MONGO_URL ?? exported(infraScript(['up']), 'MONGO_URL');
  const fleet = new Fleet(
    { MONGO_URL: mongoUrl, AMQP_URL: amqpUrl },
    path.join(os.tmpdir(), `bench-cluster-${Date.now()}`),
    runtimeFromEnv(),
  );
  await prepareRuntime(fleet.runtime);
  const [fake, receiver] = await Promise.all([startFakeOpenAi({ apiKey: KEY }), new Receiver().start()]);
  fake.always({ latencyMs: 400 });
  let failed = true;
  try {
    log(`starting six services (logs in ${fleet.logDir})`);
    await fleet.start();
    const { owner, consumers, service } = await setUp(fleet, fake, receiver);
    log(`set up: Service ${service}, ${consumers.length} consumers; submitting, then hurting the cluster`);
    const loadStarted = Date.now();
    const [submitted, phases] = await Promise.all([
      submitEvery(fleet.url('gateway'), service, consumers, 2500),
      hurt(cluster, fleet),
    ]);
    log(`all ${submitted.items.length} submissions accepted; waiting up to ${WAIT_S} s for the pipelines`);
    const { lastEnded, count, perCall, repeats } = await outcome(
      fleet,
      owner,
      submitted.items,
      fake,
      receiver,
      WAIT_S,
    );
    const hooks = [...receiver.countsById().values()];
    const once = hooks.length === submitted.items.length && hooks.every((n) => n === 1);
    const queueNames = cluster
      .script('ctl', 'a', 'list_queues', 'name', 'type', '--no-table-headers')
      .split('\n')
      .filter(
        (line) => line.startsWith(`${fleet.namespace}.`) && / quorum$/.test(line.replace(/\s+/g, ' ').trim()),
      )
      .map((line) => line.split(/\s/)[0]!)
      .filter((name) => !/\.(retries|dlq)$/.test(name));
    const consumed = await consumersPerQueue(amqpUrl, queueNames);
    const unconsumed = Object.entries(consumed)
      .filter(([, n]) => n < 1)
      .map(([name]) => name);
    process.stdout.write(
      [
        `bench/cluster: ${consumers.length} consumers, a three-node RabbitMQ cluster, ${new Date().toISOString()}, load average ${os.loadavg()[0]!.toFixed(1)}`,
        ...phases.map((line) => `  ${line}`),
        `pipelines: ${count('OK')} OK, ${count('FAILED')} FAILED, ${count(undefined)} stuck (of ${submitted.items.length})`,
        `provider calls: ${fake.requestsTo('/chat/completions').length} made for ${perCall.size} stages, ` +
          `${repeats.length} stages called more than once (${repeats.reduce((a, n) => a + n - 1, 0)} extra calls)`,
        `webhooks: ${receiver.requests.length} received for ${hooks.length} fires of ${submitted.items.length} approvals; exactly once each: ${once ? 'yes' : 'NO'}`,
        `submissions refused: ${[...submitted.refused.entries()].map(([k, n]) => `${n} x ${k}`).join(', ') || 'none'}`,
        `queues consumed at the end: ${queueNames.length - unconsumed.length} of ${queueNames.length}${unconsumed.length ? ` (none on ${unconsumed.join(', ')})` : ''}`,
        `time: ${((lastEnded - loadStarted) / 1000).toFixed(1)} s from the first submission to the last pipeline ended, ${((Date.now() - started) / 1000).toFixed(1)} s in all`,
        '',
      ].join('\n'),
    );
    failed = count('OK') !== submitted.items.length || !once || unconsumed.length > 0;
  } finally {
    await fake.close();
    await receiver.stop();
    await fleet.stop();
    cluster.down();
  }
  process.exit(failed ? 1 : 0);
}

main().catch((error: unknown) => {
  process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
  process.exit(1);
});
