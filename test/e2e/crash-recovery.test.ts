import amqp from 'amqplib';
import { loadConfig } from '@pack/config';
import { llmGatewayEnvSchema, llmGatewayService } from '@pack/llm-gateway';
import { startService, type RunningService } from '@pack/runtime';
import {
  CEILINGS,
  metricSample,
  metricsText,
  spawnService,
  startFakeOpenAi,
  waitFor,
  type FakeProviderServer,
  type ServiceProcess,
} from '@pack/testkit';
import { approvedItems, callKey, latestStages, type StageView } from '../pipeline-actors';
import { activeProcessors, modelKnownToOrchestrator, startStack, type Stack } from '../stack';

const KEY = 'sk-e2e-crash-0000';
const KINDS = ['config', 'verify', 'execution'];
const LLM_GATEWAY = 'llm-gateway';
const ORCHESTRATOR = 'pipeline-orchestrator';
/** Set-up and each test: the long ceiling (they drive volume and restarts). */
const BOUND_MS = CEILINGS.longTest;
/** The model's timeout: the sweeper would fail a stage after 6 x (30 s + 5 s) + 60 s = 270 s. */
const MODEL_TIMEOUT_S = 30;

type Stage = StageView;

/**
 * A service as its own process on free ports, ready; the test SIGKILLs it (the kit's start
 * ceiling to be ready: a loaded machine starts it slowly). It lives as long as a test may (spawnService's
 * 60 s default ran out on a loaded machine before the test had set up its pipelines).
 */
const startProcess = (name: string, env: Record<string, string>) =>
  spawnService(name, { ...env, PORT: '0', METRICS_PORT: '0' });

async function kill(process: ServiceProcess) {
  // Alive until now: the kill below is what the test makes of it.
  expect([process.child.exitCode, process.child.signalCode]).toEqual([null, null]);
  process.kill('SIGKILL');
  expect((await process.exited).signal).toBe('SIGKILL');
}

/**
 * A crash (SIGKILL) of one replica among several leaves no stage failed or stuck. The
 * llm-gateway's claims have a 1 s lease here (renewed while a call runs), so a dead replica's
 * requests, redelivered by the broker to the live one, are taken over within about a second;
 * the orchestrator would send a request again after 3 s without a result.
 */
describe('a replica killed with -9 while it holds pipeline work', () => {
  let stack: Stack;
  let fake: FakeProviderServer;
  const consumers: string[] = [];

  beforeAll(async () => {
    [stack, fake] = await Promise.all([
      startStack({
        env: {
          'llm-gateway': { LLM_CALL_LEASE_MS: '1000' },
          'pipeline-orchestrator': { PIPELINE_SWEEP_INTERVAL_MS: '200', PIPELINE_STAGE_RESEND_MS: '3000' },
        },
      }),
      startFakeOpenAi({ apiKey: KEY }),
    ]);
  }, BOUND_MS);
  afterAll(async () => {
    await fake?.close();
    await stack?.stop();
  });

  async function serviceWithProcessors(name: string): Promise<number> {
    const model = await stack.call('POST', '/v1/ai/llm_models/', {
      body: {
        name,
        provider: 'vendor1',
        model_name: 'gpt-4o-mini',
        timeout: MODEL_TIMEOUT_S,
        input_price_per_1m_tokens: '1',
        output_price_per_1m_tokens: '2',
        extra_data: { api_key: KEY, base_url: `${fake.url}/v1` },
      },
    });
    expect(model.status).toBe(201);
    await modelKnownToOrchestrator(stack, model.body.id);
    const service = await stack.call('POST', '/v1/catalog/services/', { body: { name } });
    await activeProcessors(stack, service.body.id, model.body.id, KINDS);
    return service.body.id as number;
  }

  const approve = (service: number, n: number) => approvedItems(stack, consumers, service, n);

  const stagesOf = (item: number) => latestStages(stack, item);

  /** Every pipeline ended (OK or FAILED at its last started stage), within 90 s: a third of the sweeper's 270 s. */
  const allEnded = (items: number[]) =>
    waitFor(
      async () => {
        const all = await Promise.all(items.map(stagesOf));
        const ended = (stages: Stage[]) =>
          stages[2]?.state === 'OK' || stages.some((stage) => stage.state === 'FAILED');
        return all.every(ended) && all;
      },
      { what: `${items.length} pipelines ended`, timeoutMs: CEILINGS.longWait },
    );

  /** The longest stage, scheduled to ended, in seconds. */
  const slowest = (all: Stage[][]) =>
    Math.max(
      ...all.flat().map((stage) => (Date.parse(stage.finished_at) - Date.parse(stage.started_at)) / 1000),
    );

  /** Provider calls per (item, kind) since `from`. */
  function callsSince(from: number): Map<string, number> {
    const perCall = new Map<string, number>();
    for (const request of fake.requestsTo('/chat/completions').slice(from))
      perCall.set(callKey(request), (perCall.get(callKey(request)) ?? 0) + 1);
    return perCall;
  }

  it(
    'the llm-gateway: every stage ends OK, its calls taken over within seconds; a repeated call is an attempt with its cost',
    async () => {
      const gateway = await startProcess(LLM_GATEWAY, stack.envs['llm-gateway']!);
      // Each call takes 1.5 s: the killed replica is in the middle of some when it dies.
      fake.always({ latencyMs: 1500 });
      const service = await serviceWithProcessors('Killed llm-gateway');
      const before = fake.requestsTo('/chat/completions').length;
      const claims = stack.service('llm-gateway').context.mongo.connection.collection('llm_call_claims');
      const calls = stack.service('llm-gateway').context.mongo.connection.collection('llm_calls');
      const orchestratorDb = stack.service('pipeline-orchestrator').context.mongo.connection;
      /** (Service Item, kind) of a claim, as callKey names a provider call. */
      const claimKey = async (claim: { pipeline_id: number; processor_id: number }) => {
        const [pipeline, processor] = await Promise.all([
          orchestratorDb.collection('pipelines').findOne({ _id: claim.pipeline_id as never }),
          orchestratorDb.collection('ai_processors').findOne({ _id: claim.processor_id as never }),
        ]);
        return `${pipeline?.service_item_id}/${processor?.kind}`;
      };
      // Killed once both replicas hold calls that have reached the provider (claims of two owners
      // not finished yet, whose requests the provider has): whichever is the process, a call of
      // it is then made again. A claim alone is not enough: on a loaded machine a replica can be
      // killed between its claim and its call. Watched while the items are approved (together,
      // so their calls overlap): the approvals can take longer than the pipelines.
      const holding = waitFor(
        async () => {
          const finished = new Set(
            (await calls.find({}, { projection: { _id: 1 } }).toArray()).map((c) => c._id),
          );
          const atProvider = new Set(fake.requestsTo('/chat/completions').slice(before).map(callKey));
          const open = (await claims.find({}).toArray()).filter((claim) => !finished.has(claim._id));
          const owners = new Set<unknown>();
          for (const claim of open)
            if (atProvider.has(await claimKey(claim as never))) owners.add(claim.owner);
          return owners.size === 2;
        },
        { what: 'calls of both llm-gateway replicas at the provider' },
      ).then(() => kill(gateway));
      const [items] = await Promise.all([
        approvedItems(stack, consumers, service, 8, { together: true }),
        holding,
      ]);

      const all = await allEnded(items);
      expect(all.flat().map((stage) => [stage.stage, stage.state, stage.error])).toEqual(
        items.flatMap(() => KINDS.map((kind) => [kind.toUpperCase(), 'OK', null])),
      );
      // Every stage once in the results; some calls made twice: the dead replica's and the taker's.
      const perCall = callsSince(before);
      expect(perCall.size).toBe(items.length * 3);
      const repeated = [...perCall.values()].filter((count) => count > 1);
      expect(repeated.length).toBeGreaterThanOrEqual(1);
      expect(repeated.every((count) => count === 2)).toBe(true);
      // The records of the calls taken over (each stored before its result was published).
      const takenOver = await waitFor(
        async () => {
          const records = await calls.find({ takeovers: 1 }).toArray();
          return records.length >= repeated.length && records;
        },
        { what: 'the records of the calls taken over' },
      ).catch(() => calls.find({ takeovers: 1 }).toArray());
      expect(takenOver.length).toBeGreaterThanOrEqual(repeated.length);
      for (const record of takenOver) expect(record).toMatchObject({ attempts: 2, cost: '0.000026' });
      // Well within the sweeper's 270 s: the lease, a redelivery and a call.
      const seconds = slowest(all);
      expect(seconds).toBeLessThan(MODEL_TIMEOUT_S);
      process.stdout.write(
        `llm-gateway killed: ${items.length} pipelines OK, ${repeated.length} provider calls repeated, ` +
          `slowest stage ${seconds.toFixed(1)} s\n`,
      );
    },
    BOUND_MS,
  );

  it(
    'the orchestrator: every stage ends OK, each provider call made once',
    async () => {
      const orchestrator = await startProcess(ORCHESTRATOR, stack.envs['pipeline-orchestrator']!);
      fake.always({ latencyMs: 300 });
      const service = await serviceWithProcessors('Killed orchestrator');
      const before = fake.requestsTo('/chat/completions').length;
      const items = await approve(service, 8);
      // Killed mid-run: some stages done, most still to come.
      await waitFor(async () => fake.requestsTo('/chat/completions').length >= before + 6, {
        what: 'the pipelines under way',
      });
      await kill(orchestrator);

      const all = await allEnded(items);
      expect(all.flat().map((stage) => [stage.stage, stage.state, stage.error])).toEqual(
        items.flatMap(() => KINDS.map((kind) => [kind.toUpperCase(), 'OK', null])),
      );
      const perCall = callsSince(before);
      expect(perCall.size).toBe(items.length * 3);
      expect([...perCall.values()].every((count) => count === 1)).toBe(true);
      const seconds = slowest(all);
      expect(seconds).toBeLessThan(MODEL_TIMEOUT_S);
      process.stdout.write(
        `orchestrator killed: ${items.length} pipelines OK, 0 provider calls repeated, ` +
          `slowest stage ${seconds.toFixed(1)} s\n`,
      );
    },
    BOUND_MS,
  );

  it(
    'the orchestrator sends a stage request the broker no longer holds again, under its request id',
    async () => {
      fake.always({ latencyMs: 50 });
      const service = await serviceWithProcessors('Lost request');
      const before = fake.requestsTo('/chat/completions').length;
      // The CONFIG series of the counter: the earlier cases may have re-sent other stages (a slow
      // call on a loaded machine), and their series may come first on the page.
      const orchestratorMetrics = stack.service('pipeline-orchestrator').metricsUrl;
      const configResent = async () =>
        metricSample(await metricsText(orchestratorMetrics), 'pipeline_stage_requests_resent_total', {
          stage: 'CONFIG',
        });
      const resentBefore = await configResent();
      // The only llm-gateway stops consuming; the request it would have taken is lost.
      const llm = stack.service('llm-gateway');
      const queue = llm.context.broker.declaredQueues().find((name) => name.endsWith('.generate-requests'))!;
      await llm.context.broker.stopConsuming();
      const connection = await amqp.connect(process.env.AMQP_URL!);
      let replacement: RunningService<never> | undefined;
      try {
        const channel = await connection.createChannel();
        const [item] = await approve(service, 1);
        // Every copy of the item's request is taken off the queue and dropped (the outbox relay may
        // publish one more) until the orchestrator has sent it again on its own.
        await waitFor(
          async () => {
            for (let message = await channel.get(queue, { noAck: true }); message;) {
              message = await channel.get(queue, { noAck: true });
            }
            return (await configResent()) > resentBefore;
          },
          { what: `the CONFIG request of Service Item ${item} dropped and sent again` },
        ).catch(async (error: Error) => {
          // What the sweeper saw: the item's pipeline as stored, for the failure's reader.
          const pipelines = await stack
            .service('pipeline-orchestrator')
            .context.mongo.connection.collection('pipelines')
            .find({ service_item_id: item })
            .toArray();
          const counter = (await metricsText(orchestratorMetrics))
            .split('\n')
            .filter((line) => line.startsWith('pipeline_stage_requests_resent_total'));
          throw new Error(
            `${error.message}; the item's pipelines: ${JSON.stringify(pipelines)}; the counter: ${counter.join(' ')}`,
          );
        });
        const started = await startService(
          llmGatewayService,
          loadConfig(llmGatewayEnvSchema, stack.envs['llm-gateway']),
        );
        replacement = started as unknown as RunningService<never>;
        await started.started;

        const [stages] = await allEnded([item!]);
        expect(stages!.map((stage) => [stage.stage, stage.state])).toEqual([
          ['CONFIG', 'OK'],
          ['VERIFY', 'OK'],
          ['EXECUTION', 'OK'],
        ]);
        expect([...callsSince(before).values()]).toEqual([1, 1, 1]);
      } finally {
        await replacement?.stop();
        await connection.close();
      }
    },
    BOUND_MS,
  );
});
