import { events } from '@pack/contracts';
import {
  EventTap,
  fakeDate,
  holdDate,
  metricValue,
  publishEvent,
  startFakeOpenAi,
  waitFor,
  type FakeProviderServer,
} from '@pack/testkit';
import { slowPricedModel } from '../pipeline-actors';
import { pipelineMessagesHandled, startStack, type Stack } from '../stack';

const KEY = 'sk-e2e-timeout-0000';
/** The model of the stage that times out: long enough that the provider's held answer never meets it. */
const SLOW_MODEL_SECONDS = 30;
/** The model of the stage whose call is retried: 2 attempts x (4 s + 1 s backoff) + 0.3 s = 10.3 s. */
const RETRIED_MODEL_SECONDS = 4;
const PACK = '/v1/external/serviceowner/pack/';

describe('a stage whose result does not come in time', () => {
  let stack: Stack;
  let fake: FakeProviderServer;
  let tap: EventTap;

  beforeAll(async () => {
    [stack, fake] = await Promise.all([
      startStack({
        env: {
          'pipeline-orchestrator': {
            PIPELINE_SWEEP_INTERVAL_MS: '100',
            PIPELINE_STAGE_TIMEOUT_MARGIN_MS: '300',
            // A stage may take 2 attempts x (the model's timeout + 1 s backoff) + 0.3 s: 4.3 s for a
            // 1 s model, 10.3 s for a 4 s one.
            PIPELINE_STAGE_CALL_ATTEMPTS: '2',
            PIPELINE_STAGE_BACKOFF_MS: '1000',
            // No resend of a stage waiting for its result: the held call is the only one.
            PIPELINE_STAGE_MAX_RESENDS: '0',
          },
        },
      }),
      startFakeOpenAi({ apiKey: KEY }),
    ]);
    tap = await EventTap.start(process.env.AMQP_URL!, stack.brokerNamespace, [
      events.llmGenerateCompleted.type,
    ]);
  });
  afterAll(async () => {
    await Promise.all([tap?.stop(), fake?.close()]);
    await stack?.stop();
  });

  /** A model of `timeoutSeconds` priced 1 and 2 per million tokens, and a Service with the given active processors. */
  async function slowService(name: string, kinds: string[], timeoutSeconds = 1) {
    const model = await slowPricedModel(stack, `${name} model`, fake.url, KEY, timeoutSeconds);
    const service = await stack.call('POST', '/v1/catalog/services/', { body: { name } });
    for (const kind of kinds) {
      const body = {
        name: kind,
        service: service.body.id,
        kind,
        llm_model: model,
        prompt: kind,
        active: true,
      };
      await waitFor(async () => (await stack.call('POST', '/v1/ai/processors/', { body })).status === 201, {
        what: `the ${kind} processor`,
      });
    }
    return service.body.id as number;
  }

  /** A consumer's declaration on the Service, approved: its Change Instance. */
  async function approved(service: number) {
    const consumer = await stack.issueToken('consumer');
    const submitted = await stack.call('POST', `/v1/catalog/services/${service}/declarations/`, {
      token: consumer,
      body: { declaration: { size: 'large' } },
    });
    const instance = submitted.body.change_instance;
    const approve = { body: { state: 'APPROVED' } };
    expect((await stack.call('PATCH', `/v1/catalog/change_instances/${instance.id}/`, approve)).status).toBe(
      200,
    );
    return instance as { id: number; service_item: number };
  }

  /** Waits until the orchestrator has run `count` more stage sweeps. */
  async function sweepsRun(count: number) {
    const orchestrator = stack.service('pipeline-orchestrator').metricsUrl;
    const before = await metricValue(orchestrator, 'pipeline_sweeps_total');
    await waitFor(async () => (await metricValue(orchestrator, 'pipeline_sweeps_total')) >= before + count, {
      what: `${count} stage sweeps`,
    });
  }

  const latestOf = (item: number) => stack.call('GET', `${PACK}pipelines/latest/service_item/${item}/`);

  it('the stuck-stage timeout covers every attempt a call may make: a retried call past the model timeout ends OK', async () => {
    const service = await slowService('Retried service', ['config'], RETRIED_MODEL_SECONDS);
    // The first attempt is refused; the second is held until the stage has been swept past the
    // deadline one attempt would have (the model's 4 s + the 0.3 s margin), then answers.
    let release!: () => void;
    fake
      .next({ fault: { kind: 'status', status: 429, retryAfter: '1' } })
      .next({ until: new Promise<void>((resolve) => (release = resolve)) })
      .scriptReplies('{"vm":"retried"}');
    const calls = fake.requestsTo('/chat/completions').length;
    // The services' Date stays where the test sets it: the time the machine takes between the
    // steps below moves no deadline, so a deadline of two attempts (10.3 s) is never reached.
    holdDate(Date.now());
    try {
      const instance = await approved(service);
      const latest = () => latestOf(instance.service_item);
      await waitFor(() => fake.requestsTo('/chat/completions').length >= calls + 2, {
        what: 'the refused attempt and its retry',
      });
      const running = await latest();
      expect(running.body.stages[0].state).toBe('WAITING_FOR_RESPONSE');
      const oneAttempt = RETRIED_MODEL_SECONDS * 1000 + 300;
      jest.setSystemTime(Date.parse(running.body.stages[0].started_at) + oneAttempt + 1000);
      await sweepsRun(2);
      expect((await latest()).body.stages[0].state).toBe('WAITING_FOR_RESPONSE');

      release();
      const done = await waitFor(
        async () => {
          const answer = await latest();
          const state = answer.body?.stages?.[0]?.state;
          return (state === 'OK' || state === 'FAILED') && answer;
        },
        { what: 'CONFIG to end' },
      );
      expect(done.body.stages[0]).toMatchObject({ state: 'OK', error: null, cost: '0.000026' });
      expect(done.body.total_cost).toBe('0.000026');
    } finally {
      jest.useRealTimers();
    }
  });

  it('becomes FAILED by the sweeper only after every attempt plus the margin; the late result is recorded with its cost', async () => {
    // A 30 s model: the stage may take 2 x (30 s + 1 s backoff) + 0.3 s = 62.3 s. The provider holds
    // its answer until the test has seen the stage FAILED, and the deadline is reached on the
    // test's clock (Date only: the services' timers stay real), so no margin of the machine's
    // speed decides which comes first.
    const service = await slowService('Slow service', ['config', 'verify'], SLOW_MODEL_SECONDS);
    let release!: () => void;
    fake.next({ until: new Promise<void>((resolve) => (release = resolve)) }).scriptReplies('{"vm":"late"}');
    const calls = fake.requestsTo('/chat/completions').length;
    fakeDate(Date.now());
    try {
      const instance = await approved(service);
      const latest = () => latestOf(instance.service_item);
      await waitFor(() => fake.requestsTo('/chat/completions').length > calls, { what: 'the held call' });
      const running = await waitFor(
        async () => {
          const answer = await latest();
          return answer.body?.stages?.[0]?.state === 'WAITING_FOR_RESPONSE' && answer;
        },
        { what: 'CONFIG waiting for its result' },
      );
      const deadline =
        Date.parse(running.body.stages[0].started_at) + 2 * (SLOW_MODEL_SECONDS * 1000 + 1000) + 300;

      // A second before the deadline, two sweeps later, the stage still waits.
      jest.setSystemTime(deadline - 1000);
      await sweepsRun(2);
      expect((await latest()).body.stages[0].state).toBe('WAITING_FOR_RESPONSE');

      jest.setSystemTime(deadline + 1000);
      const failed = await waitFor(
        async () => {
          const answer = await latest();
          return answer.body?.stages?.[0]?.state === 'FAILED' && answer;
        },
        { what: 'CONFIG FAILED by the sweeper' },
      );
      expect(failed.body.stages[0].error).toMatch(
        /^timeout: no result within 2 attempt\(s\) of the model's 30 s timeout and 1 s backoff plus the 0.3 s margin/,
      );
      expect(failed.body.stages[0].cost).toBeNull();
      expect(failed.body.stages[1].state).toBeNull();
      release();
      // The llm-gateway's successful result arrives later: the stage stays FAILED, its cost counts.
      const late = await tap.waitFor(
        (all) => all.some((event) => event.data.reply_to?.pipeline_id === failed.body.id),
        'the late generate result',
      );
      const lateResult = late.find((event) => event.data.reply_to?.pipeline_id === failed.body.id)!.data;
      expect(lateResult).toMatchObject({
        ok: true,
        cost: '0.000026',
        reply_to: { pipeline_id: failed.body.id, stage: 'CONFIG', run: failed.body.run },
      });
      expect(failed.body.run).toBe(1);
      const recorded = await waitFor(
        async () => {
          const answer = await latest();
          return answer.body.total_cost === '0.000026' && answer;
        },
        { what: 'the late result cost in the total' },
      );
      expect(recorded.body.stages[0]).toMatchObject({
        state: 'FAILED',
        error: failed.body.stages[0].error,
        cost: '0.000026',
      });
      expect(recorded.body.stages[1].state).toBeNull();
      expect(fake.requestsTo('/chat/completions')).toHaveLength(calls + 1);
      const orchestrator = stack.service('pipeline-orchestrator').metricsUrl;
      // The sweeper raises its counter once its write has come back; a reader can see the write first.
      await waitFor(async () => (await metricValue(orchestrator, 'pipeline_stages_timed_out_total')) >= 1, {
        what: 'the timed-out stage counted',
      });
      expect(await metricValue(orchestrator, 'pipeline_stages_timed_out_total')).toBe(1);
      // A redelivered late result adds nothing (the same result republished by the llm-gateway).
      const handledBefore = await pipelineMessagesHandled(orchestrator);
      await publishEvent(
        process.env.AMQP_URL!,
        stack.brokerNamespace,
        events.llmGenerateCompleted,
        lateResult,
      );
      await waitFor(async () => (await pipelineMessagesHandled(orchestrator)) > handledBefore, {
        what: 'the repeated late result handled',
      });
      expect((await latest()).body.total_cost).toBe('0.000026');
      // The run ended there, as with a failed result: its Change Instance says so (0026).
      await waitFor(
        async () =>
          (await stack.call('GET', `/v1/catalog/change_instances/${instance.id}/`)).body.state === 'FAILED',
        { what: 'the Change Instance to be FAILED after the timeout' },
      );
    } finally {
      jest.useRealTimers();
    }
  });
});
