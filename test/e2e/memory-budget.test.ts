/**
 * Every service within 120 MB resident under load, run as the image, compose
 * and Kubernetes run it (plain node on services/<name>/dist/main.js with the production flags
 * and allocator settings; docs/decisions/0050). The six services as their own processes
 * (bench/crash-scenario/fleet.ts, the bench's own stack), a load through the gateway:
 * declarations through all three stages on a provider answering in 150 ms, a webhook per Change
 * Instance, every list read in turn; each process's resident memory read from /proc every 200 ms
 * and held to the budget during the load. Peaks while the services start and the test sets up
 * (tokens, model, processors, webhook) are printed, not held: right after start some services
 * briefly reach 119-135 MB before their first full collection (docs/decisions/0050).
 *
 * On d1b7abd, which ran the TypeScript sources through tsx (PACK_RUNTIME=source here runs them
 * so), the catalog, orchestrator, dispatcher and gateway went over 120 MB in this test.
 */
import os from 'node:os';
import path from 'node:path';
import { call, Receiver, startFakeOpenAi, waitFor, type FakeProviderServer } from '@pack/testkit';
import { Fleet, SERVICES, type ServiceName } from '../../bench/crash-scenario/fleet';
import { prepareRuntime, rssMb, runtimeFromEnv } from '../../bench/crash-scenario/runtime';
import { KEY, KINDS, listReads, setUp } from '../../bench/crash-scenario/scenario';

const BUDGET_MB = 120;
const DECLARATIONS = 15;
const BOUND_MS = 400_000;

describe('memory: every service as its own process, as deployed', () => {
  let fleet: Fleet;
  let fake: FakeProviderServer;
  let receiver: Receiver;
  let set: Awaited<ReturnType<typeof setUp>>;
  /** Each service's peak RSS while the test sets up (reported) and under the load (held to the budget). */
  const peaks = { 'set-up': new Map<ServiceName, number>(), load: new Map<ServiceName, number>() };
  let phase: keyof typeof peaks = 'set-up';
  let sampler: NodeJS.Timeout | undefined;

  beforeAll(async () => {
    fleet = new Fleet(
      { MONGO_URL: process.env.MONGO_URL!, AMQP_URL: process.env.AMQP_URL! },
      path.join(os.tmpdir(), `e2e-memory-${Date.now()}`),
      runtimeFromEnv(),
    );
    await prepareRuntime(fleet.runtime);
    [fake, receiver] = await Promise.all([startFakeOpenAi({ apiKey: KEY }), new Receiver().start()]);
    fake.always({ latencyMs: 150 });
    await fleet.start(Object.fromEntries(SERVICES.map((name) => [name, { LOG_LEVEL: 'warn' }])));
    sampler = setInterval(() => {
      for (const name of SERVICES) {
        const rss = rssMb(fleet.pid(name));
        if (rss !== undefined) peaks[phase].set(name, Math.max(peaks[phase].get(name) ?? 0, rss));
      }
    }, 200);
    // One consumer per declaration: a second declaration of one consumer would supersede the first's run.
    set = await setUp(fleet, fake, receiver, DECLARATIONS);
    phase = 'load';
  }, BOUND_MS);

  afterAll(async () => {
    clearInterval(sampler);
    await Promise.all([fake?.close(), receiver?.stop(), fleet?.stop()]);
  }, BOUND_MS);

  it(
    '"Every service at most 120 MB RSS under its benchmark load": declarations through three stages, ' +
      'webhooks and every list read through the gateway',
    async () => {
      const gw = fleet.url('gateway');
      const reads = listReads(set.service, set.hook);
      let readsDone = 0;
      const declare = async (n: number) => {
        const answer = await call(gw, 'POST', `/v1/catalog/services/${set.service}/declarations/`, {
          token: set.consumers[n % set.consumers.length]!,
          body: { declaration: { n } },
        });
        expect(answer.status).toBe(201);
        const read = reads[n % reads.length]!;
        const list = await call(gw, 'GET', read.route, {
          token: read.as === 'owner' ? set.owner : fleet.adminToken,
        });
        expect({ route: read.route, status: list.status }).toEqual({ route: read.route, status: 200 });
        readsDone += 1;
      };
      // Five at a time.
      for (let n = 0; n < DECLARATIONS; n += 5) await Promise.all([0, 1, 2, 3, 4].map((i) => declare(n + i)));
      const progress = setInterval(
        () =>
          process.stderr.write(
            `[memory] provider calls ${fake.requestsTo('/chat/completions').length}, webhooks ${receiver.requests.length}\n`,
          ),
        15_000,
      );
      try {
        await waitFor(() => fake.requestsTo('/chat/completions').length >= DECLARATIONS * KINDS.length, {
          timeoutMs: BOUND_MS / 2,
          what: `every stage of every pipeline to call the provider (${DECLARATIONS * KINDS.length})`,
        });
      } finally {
        clearInterval(progress);
      }
      await receiver.received(DECLARATIONS);
      await new Promise((resolve) => setTimeout(resolve, 2000));

      expect(readsDone).toBe(DECLARATIONS);
      expect(receiver.countsById().size).toBe(DECLARATIONS);
      const figures = (of: Map<ServiceName, number>) =>
        Object.fromEntries(SERVICES.map((name) => [name, Math.round(of.get(name) ?? NaN)]));
      for (const [name, of] of Object.entries(peaks))
        process.stderr.write(
          `[memory] peak RSS MB during ${name} (${fleet.runtime}): ${JSON.stringify(figures(of))}\n`,
        );
      const peak = peaks.load;
      expect(SERVICES.filter((name) => !(peak.get(name)! > 0))).toEqual([]);
      const over = Object.fromEntries(Object.entries(figures(peak)).filter(([, mb]) => mb > BUDGET_MB));
      expect(over).toEqual({});
    },
    BOUND_MS,
  );
});
