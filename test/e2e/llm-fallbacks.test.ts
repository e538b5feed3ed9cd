/**
 * Fallbacks through the gateway (docs/decisions/0045): an admin names a model's
 * fallbacks; a pipeline stage whose model cannot answer (500, 429, a hang past its timeout, its
 * breaker open) is answered by the fallback, within the stuck-stage deadline, the stage showing
 * which model answered; every call is recorded with its own model's prices and cost, counted
 * per answering model on the dashboard and on /metrics.
 */
import {
  type Behaviour,
  CEILINGS,
  type FakeProviderServer,
  metricSample,
  metricsText,
  startFakeOpenAi,
  storedCollection,
  waitFor,
} from '@pack/testkit';
import { pipelineActors } from '../pipeline-actors';
import {
  expectRefused,
  modelKnownToOrchestrator,
  modelOnFakeProvider,
  startStack,
  type Stack,
} from '../stack';

const KEY = 'sk-e2e-fallbacks-0000';
const PACK = '/v1/external/serviceowner/pack/';
const MODELS = '/v1/ai/llm_models/';
/** The fake's usage (12 in, 7 out) at the fallback's prices 1 and 2 per million. */
const FALLBACK_COST = '0.000026';

describe('model fallbacks, through the gateway', () => {
  let stack: Stack;
  let actors: ReturnType<typeof pipelineActors>;
  const fakes: FakeProviderServer[] = [];
  let counter = 0;

  beforeAll(async () => {
    stack = await startStack({
      env: {
        'pipeline-orchestrator': {
          PIPELINE_SWEEP_INTERVAL_MS: '100',
          PIPELINE_STAGE_TIMEOUT_MARGIN_MS: '300',
          // One model's stage may take 3 x (its timeout + 0.5 s) + 0.3 s; with a fallback, its too.
          PIPELINE_STAGE_CALL_ATTEMPTS: '3',
          PIPELINE_STAGE_BACKOFF_MS: '500',
        },
      },
    });
    const [owner, consumer] = await Promise.all([
      stack.issueToken('service_owner'),
      stack.issueToken('consumer'),
    ]);
    actors = pipelineActors(stack, owner, consumer);
  });
  afterAll(async () => {
    await Promise.all(fakes.map((fake) => fake.close()));
    await stack?.stop();
  });

  const fakeProvider = async () => {
    const fake = await startFakeOpenAi({ apiKey: KEY });
    fake.reply = { text: '{"vm": "small"}' };
    fakes.push(fake);
    return fake;
  };
  /**
   * The asked model on one fake provider, its priced fallback on another. The asked model's
   * timeout is one only a hang meets unless a test asks for a timeout to pass (a failure that
   * answers at once must not turn into a timeout on a loaded machine).
   */
  const chain = async (fallbackFields: Record<string, unknown> = {}, askedTimeoutSeconds = 60) => {
    counter += 1;
    const [asking, answering] = [await fakeProvider(), await fakeProvider()];
    const fallback = await modelOnFakeProvider(stack, `fallback ${counter}`, answering.url, KEY, {
      input_price_per_1m_tokens: '1',
      output_price_per_1m_tokens: '2',
      ...fallbackFields,
    });
    const model = await modelOnFakeProvider(stack, `asked ${counter}`, asking.url, KEY, {
      timeout: askedTimeoutSeconds,
      fallback_models: [fallback],
    });
    await modelKnownToOrchestrator(stack, model);
    await modelKnownToOrchestrator(stack, fallback);
    return { asking, answering, model, fallback };
  };
  /** A Service with a CONFIG processor on `model` and an approved declaration: its CONFIG stage once it ended. */
  let services = 0;
  const configStage = async (model: number) => {
    services += 1;
    const service = await actors.serviceWith(`Fallback service ${services}`, model, ['config']);
    const { item } = await actors.approved(service, { size: 'small' });
    return waitFor(
      async () => {
        const latest = await actors.asOwner('GET', `${PACK}pipelines/latest/service_item/${item}/`);
        const stage = latest.body?.stages?.[0];
        return (stage?.state === 'OK' || stage?.state === 'FAILED') && { pipeline: latest.body, stage };
      },
      { what: 'the CONFIG stage ended' },
    );
  };
  /** The llm-gateway's call records of a stage's request, once there are `count`. */
  const callRecords = (pipelineId: number, count: number) =>
    waitFor(
      async () => {
        const calls = await storedCollection(stack.service('llm-gateway'), 'llm_calls');
        const mine = calls.filter((call) => String(call._id).startsWith(`pipeline-${pipelineId}-CONFIG-`));
        return mine.length === count && mine.sort((a, b) => String(a._id).localeCompare(String(b._id)));
      },
      { what: `${count} call record(s) of pipeline ${pipelineId}` },
    );
  const llmMetrics = () => metricsText(stack.service('llm-gateway').metricsUrl);

  it('"fallback_models ... no cycles, no model listed twice, refused with 400 naming the field otherwise"; a fallback in use cannot be deleted (409)', async () => {
    const fake = await fakeProvider();
    const [a, b] = [
      await modelOnFakeProvider(stack, 'cycle a', fake.url, KEY),
      await modelOnFakeProvider(stack, 'cycle b', fake.url, KEY),
    ];
    const llm = stack.service('llm-gateway');
    const patch = (id: number, body: unknown) => () => stack.call('PATCH', `${MODELS}${id}/`, { body });
    await expectRefused(llm, patch(a, { fallback_models: [b, b] }), 400, ['fallback_models']);
    await expectRefused(llm, patch(a, { fallback_models: [a] }), 400, ['fallback_models']);
    await expectRefused(llm, patch(a, { fallback_models: [987_654] }), 400, ['fallback_models']);
    expect((await stack.call('PATCH', `${MODELS}${a}/`, { body: { fallback_models: [b] } })).status).toBe(
      200,
    );
    const cycle = await expectRefused(llm, patch(b, { fallback_models: [a] }), 400, ['fallback_models']);
    expect(cycle.body.errors.fallback_models[0]).toBe(`would make a cycle: ${b} -> ${a} -> ${b}`);
    // Every read returns the list: one model, the list of models.
    expect((await stack.call('GET', `${MODELS}${a}/`)).body.fallback_models).toEqual([b]);
    const listed = await stack.call('GET', `${MODELS}?limit=100`);
    expect(listed.body.results.find((m: { id: number }) => m.id === b).fallback_models).toEqual([]);
    const deleting = await stack.call('DELETE', `${MODELS}${b}/`);
    expect(deleting.status).toBe(409);
    expect(deleting.body.detail).toContain(`is a fallback of LLM model(s) ${a}`);
  });

  it.each<[string, Behaviour, string]>([
    ['HTTP 500', { fault: { kind: 'status', status: 500 } }, 'server_error'],
    ['HTTP 429', { fault: { kind: 'status', status: 429, retryAfter: '0' } }, 'rate_limited'],
  ])(
    '"the stage is answered by the next model in the list": after %s, both call records with their costs, the dashboard and /metrics',
    async (_what, failure, reason) => {
      const { asking, answering, model, fallback } = await chain();
      asking.always(failure);
      const before = await llmMetrics();
      const { pipeline, stage } = await configStage(model);
      expect(stage).toMatchObject({
        state: 'OK',
        error: null,
        answered_model_id: fallback,
        answered_model_name: 'gpt-4o-mini',
        fallback_from: model,
        cost: FALLBACK_COST,
        pack_data: { vm: 'small' },
      });
      expect(pipeline.total_cost).toBe(FALLBACK_COST);
      expect(answering.requestsTo('/chat/completions')).toHaveLength(1);
      const [asked, answered] = await callRecords(pipeline.id, 2);
      expect(asked).toMatchObject({
        model_id: model,
        outcome: 'http_status',
        attempts: 3,
        cost: null,
        input_price_per_1m_tokens: '0.15',
        answered_model_id: fallback,
        fallback_from: null,
      });
      expect(answered).toMatchObject({
        model_id: fallback,
        outcome: 'ok',
        cost: FALLBACK_COST,
        input_price_per_1m_tokens: '1',
        output_price_per_1m_tokens: '2',
        answered_model_id: fallback,
        fallback_from: model,
        fallback_reason: reason,
      });
      // group_by=model: the asked model's failed call and the fallback's answered one, counted apart.
      const groups = await waitFor(
        async () => {
          const read = await stack.call('GET', '/v1/ai/dashboard/?group_by=model');
          const byModel = new Map(read.body.groups.map((g: { key: number }) => [g.key, g]));
          return byModel.has(fallback) && byModel.has(model) && byModel;
        },
        { what: 'both models on the dashboard' },
      );
      expect(groups.get(model)).toMatchObject({ calls: 1, errors: 1, fallbacks: 0, cost: '0' });
      expect(groups.get(fallback)).toMatchObject({ calls: 1, errors: 0, fallbacks: 1, cost: FALLBACK_COST });
      const labels = { from: String(model), to: String(fallback), reason };
      const after = await llmMetrics();
      expect(
        metricSample(after, 'pack_llm_fallbacks_total', labels) -
          metricSample(before, 'pack_llm_fallbacks_total', labels),
      ).toBe(1);
    },
  );

  it('"a hang past the timeout": the fallback answers, and "The stuck-stage deadline covers the whole chain"', async () => {
    // The asked model gives up after 1 s (its provider never answers); the fallback (10 s timeout)
    // answers after 5 s: the chain takes about 6 s, past the asked model's own deadline of
    // 3 x (1 s + 0.5 s) + 0.3 s = 4.8 s.
    const { asking, answering, model, fallback } = await chain({ timeout: 10 }, 1);
    asking.always({ latencyMs: CEILINGS.hang });
    answering.always({ latencyMs: 5000 });
    const { pipeline, stage } = await configStage(model);
    expect(stage).toMatchObject({ state: 'OK', answered_model_id: fallback, fallback_from: model });
    const [asked, answered] = await callRecords(pipeline.id, 2);
    expect(asked).toMatchObject({ outcome: 'timeout', attempts: 1, cost: null });
    expect(answered).toMatchObject({ fallback_reason: 'timeout', cost: FALLBACK_COST });
  });

  it('"breaker open": the fallback answers without the asked model being called', async () => {
    const { asking, model, fallback } = await chain();
    asking.always({ fault: { kind: 'status', status: 503 } });
    // Two stages of 3 failed attempts each open the asked model's breaker (5 calls, 50 %).
    for (let i = 0; i < 2; i++) expect((await configStage(model)).stage.fallback_from).toBe(model);
    const called = asking.requestsTo('/chat/completions').length;
    const { pipeline, stage } = await configStage(model);
    expect(stage).toMatchObject({ state: 'OK', answered_model_id: fallback, cost: FALLBACK_COST });
    expect(asking.requestsTo('/chat/completions')).toHaveLength(called);
    const [asked, answered] = await callRecords(pipeline.id, 2);
    expect(asked).toMatchObject({ outcome: 'breaker_open', attempts: 0 });
    expect(answered).toMatchObject({ fallback_reason: 'breaker_open', cost: FALLBACK_COST });
  });

  it('a chain where every model fails ends the stage FAILED with every attempt listed', async () => {
    const { asking, answering, model, fallback } = await chain();
    asking.always({ fault: { kind: 'status', status: 500 } });
    answering.always({ fault: { kind: 'status', status: 502 } });
    const { pipeline, stage } = await configStage(model);
    expect(stage).toMatchObject({
      state: 'FAILED',
      answered_model_id: null,
      fallback_from: null,
      cost: null,
    });
    expect(stage.error).toMatch(
      new RegExp(
        `^http_status: model ${model}: the provider failed, HTTP 500[^;]*; fallback model ${fallback}: the provider failed, HTTP 502`,
      ),
    );
    const records = await callRecords(pipeline.id, 2);
    expect(records.map((r) => [r.model_id, r.outcome, r.attempts])).toEqual([
      [model, 'http_status', 3],
      [fallback, 'http_status', 3],
    ]);
  });

  it('a pushed stage, and a new attempt, keep nothing of the attempt a fallback answered', async () => {
    const { asking, answering, model, fallback } = await chain();
    asking.always({ fault: { kind: 'status', status: 500 } });
    const service = await actors.serviceWith('Fallback then pushed', model, ['config', 'verify']);
    const { item } = await actors.approved(service, { size: 'pushed' });
    const latest = async () =>
      (await actors.asOwner('GET', `${PACK}pipelines/latest/service_item/${item}/`)).body;
    await waitFor(async () => (await latest())?.stages?.[1]?.state === 'OK', {
      what: 'VERIFY answered by the fallback',
    });
    const answered = {
      answered_model_id: fallback,
      answered_model_name: 'gpt-4o-mini',
      fallback_from: model,
    };
    const before = await latest();
    expect(before.stages[0]).toMatchObject(answered);
    expect(before.stages[1]).toMatchObject(answered);
    // The new VERIFY attempt the push starts is answered once the test has seen it running.
    let release!: () => void;
    answering.always({ until: new Promise<void>((resolve) => (release = resolve)) });
    const pushed = await actors.asOwner('POST', `${PACK}data/service_item/${item}/config/`, { vm: 'large' });
    expect(pushed.status).toBe(201);
    const cleared = {
      answered_model_id: null,
      answered_model_name: null,
      fallback_from: null,
      unpriced: false,
    };
    expect(pushed.body.pipeline.stages[0]).toMatchObject({
      state: 'OK',
      origin: 'pushed',
      cost: null,
      pack_data: { vm: 'large' },
      ...cleared,
    });
    expect(pushed.body.pipeline.stages[1]).toMatchObject({ origin: 'generated', ...cleared });
    expect(['SCHEDULED', 'WAITING_FOR_RESPONSE']).toContain(pushed.body.pipeline.stages[1].state);
    const running = await latest();
    expect(running.stages[0]).toMatchObject({ origin: 'pushed', ...cleared });
    expect(running.stages[1]).toMatchObject(cleared);
    expect(['SCHEDULED', 'WAITING_FOR_RESPONSE']).toContain(running.stages[1].state);
    release();
    // Its own answer then names who gave it.
    await waitFor(async () => (await latest()).stages[1].state === 'OK', {
      what: 'the new VERIFY attempt answered',
    });
    expect((await latest()).stages[1]).toMatchObject(answered);
  });
});
