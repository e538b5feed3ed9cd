import { events, type EventData } from '@pack/contracts';
import {
  EventTap,
  metricsAddedSince,
  metricSample,
  metricsText,
  publishEvent,
  waitFor,
  type TappedEvent,
} from '@pack/testkit';
import { PIPELINES_COLLECTION, PACK_DATA_COLLECTION } from '../src/service';
import { OrchestratorHarness, startOrchestrator, otherOwner, owner, processorBody } from './harness';
import { approval, generateResult, PACK } from './pipeline-driver';

type Request = EventData<typeof events.llmGenerateRequested>;

describe('pipelines', () => {
  let orchestrator: OrchestratorHarness;
  let tap: EventTap;
  const publish = <D extends Parameters<typeof publishEvent>[2]>(definition: D, data: EventData<D>) =>
    publishEvent(process.env.AMQP_URL!, orchestrator.env.BROKER_NAMESPACE!, definition, data);

  /** The fake llm-gateway: answers a request as the real one would publish its result. */
  const answer = (request: Request, over: Partial<EventData<typeof events.llmGenerateCompleted>> = {}) =>
    publish(events.llmGenerateCompleted, generateResult(request, over));

  /** The generate request for an item's stage (waits for it). */
  const requestFor = async (item: number, stage: string, attempt = 1): Promise<Request> => {
    const found = await tap.waitFor(
      (all) => all.some((event) => matches(event, item, stage, attempt)),
      `${stage} request of item ${item}`,
    );
    return found.find((event) => matches(event, item, stage, attempt))!.data as Request;
  };
  const pipelinesOf = (item: number) =>
    orchestrator.collection(PIPELINES_COLLECTION).find({ service_item_id: item }).toArray();
  const latest = (item: number) =>
    orchestrator.as(owner, 'GET', `${PACK}pipelines/latest/service_item/${item}/`);
  const stateOf = async (item: number, stage: string) =>
    ((await latest(item)).body?.stages as { stage: string; state: string }[] | undefined)?.find(
      (entry) => entry.stage === stage,
    )?.state;

  beforeAll(async () => {
    orchestrator = await startOrchestrator();
    tap = await EventTap.start(process.env.AMQP_URL!, orchestrator.env.BROKER_NAMESPACE!, [
      'llm.generate.requested.v1',
    ]);
    await orchestrator.knowService({ service_id: 1 });
    await orchestrator.knowService({ service_id: 2 });
    await orchestrator.knowService({ service_id: 4 });
    await orchestrator.knowService({
      service_id: 3,
      owner: { id: otherOwner.id, name: otherOwner.username },
    });
    await orchestrator.knowModel({ llm_model_id: 1 });
    for (const kind of ['config', 'verify', 'execution'])
      expect(
        (await orchestrator.create(processorBody({ kind, active: true, prompt: `Do ${kind}.` }))).status,
      ).toBe(201);
    // Service 2 has a config processor only.
    expect((await orchestrator.create(processorBody({ service: 2, active: true }))).status).toBe(201);
  });
  afterAll(async () => {
    await tap.stop();
    await orchestrator.stop();
  });

  it('runs CONFIG on approval, then VERIFY and EXECUTION on their own, summing the costs exactly', async () => {
    const before = await metricsText(orchestrator.service.metricsUrl);
    await publish(events.changeInstanceStateChanged, approval(100, 1000, { size: 'large' }));
    const config = await requestFor(100, 'CONFIG');
    expect(config.messages).toEqual([
      { role: 'system', content: 'Do config.' },
      { role: 'user', content: 'Latest approved declaration of Service Item 100:\n{"size":"large"}' },
    ]);
    await waitFor(async () => (await stateOf(100, 'CONFIG')) === 'WAITING_FOR_RESPONSE', { what: 'waiting' });
    await answer(config, { output: '{"vm":"big"}', cost: '0.1' });

    const verify = await requestFor(100, 'VERIFY');
    expect(verify.messages[1]!.content).toBe(
      'Latest approved declaration of Service Item 100:\n{"size":"large"}\n\nPackData of the CONFIG stage:\n{"vm":"big"}',
    );
    await answer(verify, { output: 'looks fine', cost: '0.2' });
    const execution = await requestFor(100, 'EXECUTION');
    expect(execution.messages[1]!.content).toContain('PackData of the VERIFY stage:\n{"text":"looks fine"}');
    await answer(execution, { output: '{"delivered":true}', cost: '0.000000000001' });

    await waitFor(async () => (await stateOf(100, 'EXECUTION')) === 'OK', { what: 'EXECUTION OK' });
    const body = (await latest(100)).body;
    expect(body).toMatchObject({
      service_item: 100,
      run: 1,
      total_cost: '0.300000000001',
      currency: 'USD',
      stages: [
        { stage: 'CONFIG', state: 'OK', cost: '0.1', pack_data: { vm: 'big' }, error: null },
        { stage: 'VERIFY', state: 'OK', cost: '0.2', pack_data: { text: 'looks fine' } },
        { stage: 'EXECUTION', state: 'OK', cost: '0.000000000001', pack_data: { delivered: true } },
      ],
    });
    expect((await orchestrator.as(owner, 'GET', `${PACK}pipelines/${body.id}/`)).body).toEqual(body);
    // Each stage holds its PackData; the history keeps only replaced ones (none here).
    expect(await orchestrator.collection(PACK_DATA_COLLECTION).countDocuments({ service_item_id: 100 })).toBe(
      0,
    );
    // What this one pipeline added: each stage scheduled, waited for and finished OK once.
    const expected = ['CONFIG', 'VERIFY', 'EXECUTION'].map((stage) => ({
      stage,
      scheduled: 1,
      waiting: 1,
      ok: 1,
      timed: 1,
    }));
    const reading = await metricsAddedSince(
      orchestrator.service.metricsUrl,
      before,
      (added) =>
        expected.map(({ stage }) => ({
          stage,
          scheduled: added('pipeline_stage_transitions_total', { stage, state: 'SCHEDULED' }),
          waiting: added('pipeline_stage_transitions_total', { stage, state: 'WAITING_FOR_RESPONSE' }),
          ok: added('pipeline_stage_transitions_total', { stage, state: 'OK' }),
          timed: added('pipeline_stage_duration_seconds_count', { stage, outcome: 'ok' }),
        })),
      expected,
    );
    expect(reading).toEqual(expected);
    const after = await metricsText(orchestrator.service.metricsUrl);
    expect(metricSample(after, 'pipelines_running')).toBe(0);
  });

  it('starts nothing twice for a redelivered approval, and a repeated result changes nothing', async () => {
    const event = approval(101, 1010, { n: 1 });
    await publish(events.changeInstanceStateChanged, event);
    const config = await requestFor(101, 'CONFIG');
    await answer(config, { output: '{"a":1}', cost: '1.5' });
    await requestFor(101, 'VERIFY');
    await publish(events.changeInstanceStateChanged, event);
    await answer(config, { output: '{"a":2}', cost: '1.5' });
    // A later approval of another item goes through the same queue after both repeats.
    await publish(events.changeInstanceStateChanged, approval(102, 1020, { n: 2 }));
    await requestFor(102, 'CONFIG');
    await waitFor(async () => (await pipelinesOf(102)).length === 1, { what: 'item 102 pipeline' });

    const stored = await pipelinesOf(101);
    expect(stored).toHaveLength(1);
    expect(stored[0]).toMatchObject({ costs: ['1.5'], stages: { VERIFY: { attempt: 1 } } });
    expect((await latest(101)).body.stages[0]).toMatchObject({ state: 'OK', pack_data: { a: 1 } });
  });

  it("follows the catalog's latest approval when approval events arrive out of order: the overtaken one starts no run (docs/decisions/0055)", async () => {
    // D2 (declaration 1502) was approved first (number 7), D1 (1501) last (number 8), but D1's
    // event arrives first.
    await publish(events.changeInstanceStateChanged, {
      ...approval(150, 1501, { v: 1 }),
      approval_seq: 8,
    });
    await requestFor(150, 'CONFIG');
    await publish(events.changeInstanceStateChanged, {
      ...approval(150, 1502, { v: 2 }),
      approval_seq: 7,
    });
    // A later approval of another item goes through the same queue after it.
    await publish(events.changeInstanceStateChanged, approval(151, 1510, { n: 6 }));
    await requestFor(151, 'CONFIG');
    await waitFor(async () => (await pipelinesOf(151)).length === 1, { what: 'item 151 pipeline' });
    const runs = await pipelinesOf(150);
    expect(runs.map((run) => run.origin)).toEqual(['approval:1501']);
    expect(await orchestrator.collection('service_items').findOne({ _id: 150 as never })).toMatchObject({
      change_instance_id: 1501,
      declaration_json: '{"v":1}',
    });
  });

  it('marks a stage FAILED with the error and starts no next stage', async () => {
    await publish(events.changeInstanceStateChanged, approval(103, 1030, {}));
    const config = await requestFor(103, 'CONFIG');
    await answer(config, {
      ok: false,
      usage: null,
      error: { kind: 'timeout', message: 'provider took too long' },
    });
    await waitFor(async () => (await stateOf(103, 'CONFIG')) === 'FAILED', { what: 'CONFIG FAILED' });
    expect((await latest(103)).body.stages).toMatchObject([
      { stage: 'CONFIG', state: 'FAILED', error: 'timeout: provider took too long', pack_data: null },
      { stage: 'VERIFY', state: null },
      { stage: 'EXECUTION', state: null },
    ]);
  });

  it('triggers stages by hand: 404 for unknown stages and items, 409 without PackData or processor', async () => {
    await publish(events.changeInstanceStateChanged, approval(104, 1040, { x: 1 }, 2));
    await publish(events.changeInstanceStateChanged, approval(105, 1050, { x: 1 }, 3));
    await publish(events.changeInstanceStateChanged, approval(107, 1070, { x: 1 }));
    await requestFor(104, 'CONFIG');
    await requestFor(107, 'CONFIG');
    await waitFor(
      async () =>
        (await orchestrator.collection('service_items').countDocuments({ _id: 105 as never })) === 1,
      {
        what: 'item 105 known',
      },
    );
    const trigger = (item: number, stage: string) =>
      orchestrator.as(owner, 'POST', `${PACK}trigger/service_item/${item}/${stage}/`);

    expect((await trigger(104, 'deploy')).status).toBe(404);
    expect((await trigger(999, 'config')).status).toBe(404);
    expect((await trigger(105, 'config')).status).toBe(404); // another owner's Service
    const noData = await trigger(107, 'verify');
    expect(noData.status).toBe(409);
    expect(noData.body.detail).toMatch(/CONFIG stage has no PackData/);
    const before = await pipelinesOf(104);

    const started = await trigger(104, 'config');
    expect(started.status).toBe(202);
    expect(started.body).toMatchObject({ service_item: 104, run: 2 });
    expect(started.body.stages[0]).toMatchObject({ stage: 'CONFIG', state: 'WAITING_FOR_RESPONSE' });
    const ofRun2 = (all: TappedEvent[]) =>
      all.find((event) => (event.data as Request).reply_to?.pipeline_id === started.body.id);
    await answer(
      ofRun2(await tap.waitFor((all) => ofRun2(all) !== undefined, 'run 2 request'))!.data as Request,
      {
        output: '{"ok":true}',
      },
    );
    await waitFor(async () => (await stateOf(104, 'CONFIG')) === 'OK', { what: 'run 2 CONFIG OK' });
    const noProcessor = await trigger(104, 'verify');
    expect(noProcessor.status).toBe(409);
    expect(noProcessor.body.detail).toMatch(/no active verify processor/);
    expect((await pipelinesOf(104)).length).toBe(before.length + 1);
  });

  it('stores the data half of a combined reply as PackData and checks its generative UI', async () => {
    const created = await orchestrator.create(
      processorBody({
        service: 4,
        kind: 'verify',
        active: true,
        generative_ui: true,
        response_schema: { type: 'object', properties: { passed: { type: 'boolean' } } },
      }),
    );
    expect(created.status).toBe(201);
    expect((await orchestrator.create(processorBody({ service: 4, active: true }))).status).toBe(201);
    await publish(events.changeInstanceStateChanged, approval(106, 1060, {}, 4));
    await answer(await requestFor(106, 'CONFIG'), { output: '{"c":1}' });
    const verify = await requestFor(106, 'VERIFY');
    expect(JSON.parse(verify.response_schema!)).toMatchObject({ required: ['data', 'gen_ui'] });
    const genUi = { components: [{ type: 'nonexistent_widget', props: {} }] };
    await answer(verify, { parsed_json: JSON.stringify({ data: { passed: true }, gen_ui: genUi }) });
    await waitFor(async () => (await stateOf(106, 'VERIFY')) === 'OK', { what: 'VERIFY OK' });
    expect((await latest(106)).body.stages[1]).toMatchObject({
      pack_data: { passed: true },
      gen_ui: genUi,
      gen_ui_valid: false,
    });
  });
});

function matches(event: TappedEvent, item: number, stage: string, attempt: number): boolean {
  const data = event.data as Request;
  return (
    data.reply_to?.stage === stage &&
    data.request_id.endsWith(`-${stage}-${attempt}`) &&
    event.raw.includes(`Service Item ${item}:`)
  );
}
