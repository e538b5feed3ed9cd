import { loadConfig } from '@pack/config';
import { llmGatewayEnvSchema, llmGatewayService } from '@pack/llm-gateway';
import { startService, type RunningService } from '@pack/runtime';
import {
  CEILINGS,
  metricValue,
  spawnService,
  startFakeOpenAi,
  waitFor,
  type FakeProviderServer,
  type ServiceProcess,
} from '@pack/testkit';
import { approvedItems, callKey, latestStages } from '../pipeline-actors';
import {
  activeProcessors,
  modelKnownToOrchestrator,
  pipelineMessagesHandled,
  startStack,
  type Stack,
} from '../stack';

const KEY = 'sk-e2e-scale-0000';
const KINDS = ['config', 'verify', 'execution'];
/** Set-up and each test: the long ceiling (they drive volume and restarts). */
const BOUND_MS = CEILINGS.longTest;

/** The orchestrator as its own process, on free ports; it lives as long as the file may (the test kills it). */
const startOrchestrator = (env: Record<string, string>) =>
  spawnService(
    'pipeline-orchestrator',
    { ...env, PORT: '0', METRICS_PORT: '0' },
    { what: 'the second orchestrator ready' },
  );

describe('two orchestrators and two llm-gateways', () => {
  let stack: Stack;
  let fast: FakeProviderServer;
  let slow: FakeProviderServer;
  let secondGateway: RunningService<never> | undefined;
  let child: ServiceProcess | undefined;
  let childMetrics = '';
  const consumers: string[] = [];

  beforeAll(async () => {
    [stack, fast, slow] = await Promise.all([
      startStack({
        env: {
          'pipeline-orchestrator': {
            PIPELINE_SWEEP_INTERVAL_MS: '200',
            PIPELINE_STAGE_TIMEOUT_MARGIN_MS: '500',
            // One attempt's time: the stuck stage below fails after 1 s + 0.5 s.
            PIPELINE_STAGE_CALL_ATTEMPTS: '1',
            PIPELINE_STAGE_BACKOFF_MS: '0',
          },
        },
      }),
      startFakeOpenAi({ apiKey: KEY }),
      startFakeOpenAi({ apiKey: KEY }),
    ]);
    const gateway = await startService(
      llmGatewayService,
      loadConfig(llmGatewayEnvSchema, stack.envs['llm-gateway']),
    );
    await gateway.started;
    secondGateway = gateway as unknown as RunningService<never>;
    child = await startOrchestrator(stack.envs['pipeline-orchestrator']!);
    childMetrics = child.metricsUrl;
  }, BOUND_MS);
  afterAll(async () => {
    child?.kill('SIGKILL');
    await child?.exited;
    await secondGateway?.stop();
    await Promise.all([fast?.close(), slow?.close()]);
    await stack?.stop();
  });

  async function model(name: string, fake: FakeProviderServer, timeout: number): Promise<number> {
    const created = await stack.call('POST', '/v1/ai/llm_models/', {
      body: {
        name,
        provider: 'vendor1',
        model_name: 'gpt-4o-mini',
        timeout,
        extra_data: { api_key: KEY, base_url: `${fake.url}/v1` },
      },
    });
    expect(created.status).toBe(201);
    await modelKnownToOrchestrator(stack, created.body.id);
    return created.body.id as number;
  }

  async function serviceOn(name: string, llmModel: number): Promise<number> {
    const service = await stack.call('POST', '/v1/catalog/services/', { body: { name } });
    await activeProcessors(stack, service.body.id, llmModel, KINDS);
    return service.body.id as number;
  }

  const approve = (service: number, n: number) => approvedItems(stack, consumers, service, n);

  const stagesOf = (item: number) => latestStages(stack, item);

  const allDone = (items: number[]) =>
    waitFor(
      async () => {
        const all = await Promise.all(items.map(stagesOf));
        return all.every((stages) => stages[2]?.state === 'OK') && all;
      },
      { what: `${items.length} pipelines through EXECUTION`, timeoutMs: CEILINGS.longWait },
    );

  it(
    'runs every stage once per trigger and fails a stuck stage once',
    async () => {
      fast.always({ latencyMs: 50 });
      // Each call is told to come back in 4 s: its result comes long after 1 s + 0.5 s.
      slow.always({ fault: { kind: 'status', status: 429, retryAfter: '4' } });
      const service = await serviceOn('Scaled', await model('Fast', fast, 30));
      const stuckService = await serviceOn('Stuck', await model('Slow', slow, 1));

      const items = await approve(service, 8);
      const [stuck] = await approve(stuckService, 1);
      await allDone(items);
      // Each request went out at once and left its pipeline's outbox in the same update as WAITING_FOR_RESPONSE.
      const stored = await stack
        .service('pipeline-orchestrator')
        .context.mongo.connection.collection('pipelines')
        .find({ service_item_id: { $in: items } })
        .toArray();
      expect(stored.map((pipeline) => [pipeline._outbox, pipeline._outbox_pending])).toEqual(
        items.map(() => [[], false]),
      );
      const perCall = new Map<string, number>();
      for (const request of fast.requestsTo('/chat/completions'))
        perCall.set(callKey(request), (perCall.get(callKey(request)) ?? 0) + 1);
      expect(perCall.size).toBe(items.length * 3);
      expect([...perCall.values()].every((count) => count === 1)).toBe(true);

      const failed = await waitFor(
        async () => {
          const stages = await stagesOf(stuck!);
          return stages[0]?.state === 'FAILED' && stages;
        },
        { what: 'the stuck CONFIG failed by a sweeper' },
      );
      expect(failed[0]!.error).toMatch(/^timeout: /);
      expect(failed[1]!.state).toBeNull();
      const timedOut = async () =>
        (await metricValue(
          stack.service('pipeline-orchestrator').metricsUrl,
          'pipeline_stages_timed_out_total',
        )) + (await metricValue(childMetrics, 'pipeline_stages_timed_out_total'));
      // The sweeper counts a failure once its write is back, which a reader can see first.
      await waitFor(async () => (await timedOut()) > 0, { what: 'the timed-out stage counted' });
      expect(await timedOut()).toBe(1);
      // Both replicas sweep on: a sweep later, still once.
      const sweeps = await metricValue(childMetrics, 'pipeline_sweeps_total');
      await waitFor(async () => (await metricValue(childMetrics, 'pipeline_sweeps_total')) > sweeps + 2, {
        what: 'more sweeps',
      });
      expect(await timedOut()).toBe(1);
      expect(await stagesOf(stuck!)).toEqual(failed);
    },
    BOUND_MS,
  );

  it(
    'leaves nothing stuck when one orchestrator is killed with -9 mid-pipeline',
    async () => {
      fast.always({ latencyMs: 100 });
      const service = await serviceOn('Killed mid-flight', await model('Fast too', fast, 30));
      const before = fast.requestsTo('/chat/completions').length;
      const handledByChild = await pipelineMessagesHandled(childMetrics);
      const items = await approve(service, 8);
      // Killed once it has had its share of this work, with most stages still to run.
      await waitFor(
        async () =>
          fast.requestsTo('/chat/completions').length >= before + 6 &&
          (await pipelineMessagesHandled(childMetrics)) > handledByChild,
        { what: 'the pipelines under way on both replicas' },
      );
      child!.kill('SIGKILL');
      expect((await child!.exited).signal).toBe('SIGKILL');

      const done = await allDone(items);
      expect(done.flat().every((stage) => stage.state === 'OK')).toBe(true);
      const calls = fast.requestsTo('/chat/completions').slice(before).map(callKey);
      expect(new Set(calls).size).toBe(items.length * 3);
      expect(calls).toHaveLength(items.length * 3);
    },
    BOUND_MS,
  );
});
