/**
 * bench/soak: a steady mixed load on the six services as their own processes, for a given time
 * (docs/decisions/0050-compiled-services.md).
 *
 * The crash scenario's set-up (bench/crash-scenario: an auto-approved Service with config, verify
 * and execution processors on a local OpenAI-shaped provider answering in 150 ms, a webhook on
 * APPROVED to a local receiver), then until the time is up: declarations at RATE per second
 * (each runs all three stages and fires a webhook; one delivery in ten is answered 503 and
 * retried), two list reads a second through the gateway in turn over every list, and a settings
 * change every 15 s. Prints per service RSS at start, after warm-up and at the end with the slope
 * in MB per hour after warm-up, event-loop delay p99 and open handles; the API's p99 in the first
 * and the last window (5 minutes; fifths of the run in short mode or under 25 minutes);
 * documents and bytes per collection per 1,000 operations; queue depths. Exits 1 when a target
 * is missed (RSS slope >= 5 MB/h, any RSS above 120 MB, p99 drift >= 20 %, a queue growing, a
 * service's cold start, restarted alone after the run, 10 s or more).
 *
 *   pnpm bench:soak                 30 minutes
 *   pnpm bench:soak --minutes 120   two hours
 *   pnpm bench:soak --short         3 minutes, for a quick look
 *   RATE=2  PACK_RUNTIME=source (run the TypeScript sources through tsx, to compare)
 */
import os from 'node:os';
import { call, Receiver, startFakeOpenAi } from '@pack/testkit';
import { Fleet, SERVICES } from '../crash-scenario/fleet';
import { runBench } from '../crash-scenario/runtime';
import { KEY, listReads, setUp } from '../crash-scenario/scenario';
import { reportServices, reportStorage } from './report';
import { Sampler } from './sampler';
import { collectionSizes, queueDepths, type CollectionSize } from './state';

const args = process.argv.slice(2);
const SHORT = args.includes('--short');
const minutesArg = args.indexOf('--minutes');
const MINUTES = minutesArg >= 0 ? Number(args[minutesArg + 1]) : SHORT ? 3 : 30;
const RATE = Number(process.env.RATE ?? 2);
const CONSUMERS = 20;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const log = (line: string) => process.stderr.write(`[soak] ${line}\n`);
/** The database may not answer (a stalled server): the figures that need it are then left out. */
const within = <T>(promise: Promise<T>, ms = 60_000): Promise<T | undefined> =>
  Promise.race([promise, sleep(ms).then(() => undefined)]);

async function main(): Promise<void> {
  if (!(MINUTES > 0)) throw new Error('--minutes needs a positive number');
  const fleet = await Fleet.forBench('soak');
  const [fake, receiver] = await Promise.all([startFakeOpenAi({ apiKey: KEY }), new Receiver().start()]);
  fake.always({ latencyMs: 150 });
  const stopAll = () => Promise.all([fake.close(), receiver.stop(), fleet.stop()]);
  for (const signal of ['SIGINT', 'SIGTERM'] as const)
    process.once(signal, () => void within(stopAll(), 120_000).finally(() => process.exit(130)));
  const sampler = new Sampler(fleet);
  let failed = true;
  try {
    const coldStart = Date.now();
    log(`starting six services (${fleet.runtime}; logs in ${fleet.logDir})`);
    await fleet.start({ 'llm-gateway': { LOG_LEVEL: 'warn' }, gateway: { LOG_LEVEL: 'warn' } });
    log(`all six ready in ${((Date.now() - coldStart) / 1000).toFixed(1)} s`);
    sampler.start(SHORT || MINUTES < 10 ? 5_000 : 15_000);
    const { owner, consumers, service, hook } = await setUp(fleet, fake, receiver, CONSUMERS);
    const gw = fleet.url('gateway');
    const startedAt = Date.now();
    const endAt = startedAt + MINUTES * 60_000;
    const fifths = SHORT || MINUTES < 25;
    const windowMs = fifths ? (MINUTES * 60_000) / 5 : 5 * 60_000;
    const warmedAt = startedAt + windowMs;
    log(`load for ${MINUTES} min: ${RATE} declarations/s, 2 list reads/s, a settings change every 15 s`);
    const counts = { declared: 0, refused: 0, reads: 0, readErrors: 0, settings: 0, atWarm: 0 };
    const operations = () => counts.declared + counts.reads + counts.settings;
    const inFlight = new Set<Promise<unknown>>();
    // A request that fails outright (no answer at all, e.g. a stalled database behind the gateway)
    // is counted and logged, never an unhandled rejection that ends the run.
    let failures = 0;
    const fire = (request: () => Promise<unknown>) => {
      const promise = request()
        .catch((error: unknown) => {
          failures += 1;
          if (failures <= 5) log(`a request got no answer: ${String(error)}`);
        })
        .finally(() => inFlight.delete(promise));
      inFlight.add(promise);
    };
    const routes = listReads(service, hook);
    let warm: Map<string, CollectionSize> | undefined;
    let warmQueues = new Map<string, number>();
    for (let tick = 0; Date.now() < endAt; tick += 1) {
      if (!warm && Date.now() >= warmedAt) {
        counts.atWarm = operations();
        warm = await within(collectionSizes(fleet));
        warmQueues = queueDepths(fleet.namespace);
        log(`warmed up: ${counts.declared} declarations, ${counts.reads} reads so far`);
      }
      // One tick every 1/(2*RATE) s: a declaration every other tick, reads at 2 per second.
      if (tick % 2 === 0)
        fire(async () => {
          const answer = await sampler.timed(() =>
            call(gw, 'POST', `/v1/catalog/services/${service}/declarations/`, {
              token: consumers[tick % consumers.length]!,
              body: { declaration: { n: tick } },
            }),
          );
          counts[answer.status === 201 ? 'declared' : 'refused'] += 1;
          if (counts.declared % 10 === 0) receiver.next({ status: 503, body: 'soak: try again' });
        });
      if (tick % Math.max(1, RATE) === 0)
        fire(async () => {
          const read = routes[counts.reads % routes.length]!;
          const answer = await sampler.timed(() =>
            call(gw, 'GET', read.route, { token: read.as === 'owner' ? owner : fleet.adminToken }),
          );
          counts[answer.status === 200 ? 'reads' : 'readErrors'] += 1;
          if (answer.status !== 200 && counts.readErrors <= 5) log(`GET ${read.route} ${answer.status}`);
        });
      if (tick % Math.round(30 * RATE) === 0)
        fire(async () => {
          const answer = await sampler.timed(() =>
            call(gw, 'PATCH', '/v1/core/general_settings/', {
              token: fleet.adminToken,
              body: { global_banner: { message: `Soak ${tick}` } },
            }),
          );
          if (answer.status === 200) counts.settings += 1;
          else log(`PATCH general_settings ${answer.status}: ${answer.text.slice(0, 200)}`);
        });
      await sleep(500 / RATE);
    }
    const endedAt = Date.now();
    // At most a minute for the requests still in flight: one the gateway never answers (a stalled
    // database) would otherwise hold the report for fetch's own five minutes, or for ever.
    const settled = await within(Promise.allSettled([...inFlight]));
    const unanswered = settled ? 0 : inFlight.size;
    sampler.stop();
    await sampler.sampleOnce();
    log(
      `load over; ${unanswered} requests unanswered after 60 s. Waiting 20 s for the pipelines in progress`,
    );
    await sleep(20_000);
    const load = os.loadavg().map((n) => n.toFixed(2));
    process.stdout.write(
      `\nsoak: ${MINUTES} min, ${fleet.runtime} services, load average ${load.join(' ')} (${os.cpus().length} cores)\n` +
        `declarations ${counts.declared} accepted (${counts.refused} refused), list reads ${counts.reads} ` +
        `(${counts.readErrors} not 200), settings changes ${counts.settings}, requests without an answer ` +
        `${failures + unanswered}; provider calls ` +
        `${fake.requestsTo('/chat/completions').length}; webhooks received ${receiver.requests.length} ` +
        `(${receiver.countsById().size} distinct)\n`,
    );
    const print = (line: string) => process.stdout.write(`${line}\n`);
    const missed = reportServices({ sampler, startedAt, warmedAt, endedAt, windowMs }, print);
    const storage = {
      operations: { total: operations(), afterWarmUp: operations() - counts.atWarm },
      collections: { warm, end: await within(collectionSizes(fleet)) },
      queues: { warm: warmQueues, end: queueDepths(fleet.namespace) },
    };
    missed.push(...reportStorage(storage, print));
    // Cold start: each service killed and started again alone, the others running.
    // One that does not get ready (within 120 s) is a missed target, and the others are not tried.
    const starts: string[] = [];
    for (const name of SERVICES) {
      try {
        await fleet.kill(name);
        await fleet.restart(name);
      } catch (error) {
        starts.push(`${name} not ready (the others not tried)`);
        missed.push(`${name}: not ready after a restart (${String(error)})`);
        break;
      }
      starts.push(`${name} ${((fleet.readyAfterMs(name) ?? NaN) / 1000).toFixed(1)} s`);
      if ((fleet.readyAfterMs(name) ?? Infinity) >= 10_000) missed.push(`${name}: cold start over 10 s`);
    }
    process.stdout.write(`cold start to ready, one at a time: ${starts.join(', ')}\n`);
    process.stdout.write(missed.length === 0 ? 'every target held\n' : `missed: ${missed.join('; ')}\n`);
    failed = missed.length > 0;
  } finally {
    // Bounded too: dropping the databases waits on the database, which may not answer.
    if ((await within(stopAll(), 120_000)) === undefined)
      log(`not stopped within 120 s: databases and queues of ${fleet.namespace} may be left`);
  }
  process.exit(failed ? 1 : 0);
}

runBench(main);
