import { events } from '@pack/contracts';
import { waitFor, type TappedEvent } from '@pack/testkit';
import { EXECUTION_NOTES_COLLECTION, PACK_DATA_COLLECTION, PIPELINES_COLLECTION } from '../src/service';
import { OrchestratorHarness, startOrchestrator, otherOwner, owner, processorBody } from './harness';
import { PACK, PipelineDriver } from './pipeline-driver';

/** Endpoints 4 (retrigger with the execution context) and 5 (PackData pushed from outside). */
describe('pipeline flows: retrigger and PackData push', () => {
  let orchestrator: OrchestratorHarness;
  let driver: PipelineDriver;

  type Stage = { stage: string; state: string | null; origin: string | null; pack_data: unknown };
  const latest = (item: number) =>
    orchestrator.as(owner, 'GET', `${PACK}pipelines/latest/service_item/${item}/`);
  const stageOf = async (item: number, stage: string) =>
    ((await latest(item)).body?.stages as Stage[] | undefined)?.find((entry) => entry.stage === stage);
  /** The item's latest pipeline once its run number is `run`. */
  const run = (item: number, number = 1) =>
    waitFor(
      async () => {
        const answer = await latest(item);
        return answer.body?.run === number && (answer.body as { id: number; run: number });
      },
      { what: `run ${number} of item ${item}` },
    );
  const push = (item: number, stage: string, body: unknown, principal = owner, query = '') =>
    orchestrator.as(principal, 'POST', `${PACK}data/service_item/${item}/${stage}/${query}`, body);
  const retrigger = (item: number, body?: unknown, principal = owner) =>
    orchestrator.as(principal, 'POST', `${PACK}retrigger/service_item/${item}/`, body);
  const stored = async (item: number) => ({
    pipelines: await orchestrator.collection(PIPELINES_COLLECTION).find({ service_item_id: item }).toArray(),
    packData: await orchestrator.collection(PACK_DATA_COLLECTION).countDocuments({ service_item_id: item }),
    notes: await orchestrator
      .collection(EXECUTION_NOTES_COLLECTION)
      .countDocuments({ service_item_id: item }),
  });

  beforeAll(async () => {
    orchestrator = await startOrchestrator();
    driver = await PipelineDriver.start(orchestrator, [events.pipelineProgress.type]);
    await orchestrator.knowService({ service_id: 1 });
    await orchestrator.knowService({ service_id: 2 });
    await orchestrator.knowService({
      service_id: 3,
      owner: { id: otherOwner.id, name: otherOwner.username },
    });
    await orchestrator.knowModel({ llm_model_id: 1 });
    for (const kind of ['config', 'verify', 'execution'])
      expect(
        (await orchestrator.create(processorBody({ kind, active: true, prompt: `Do ${kind}.` }))).status,
      ).toBe(201);
    // Service 2 has a verify processor only: no CONFIG, so no retrigger.
    expect(
      (await orchestrator.create(processorBody({ service: 2, kind: 'verify', active: true }))).status,
    ).toBe(201);
  });
  afterAll(async () => {
    await driver.stop();
    await orchestrator.stop();
  });

  it('stores pushed PackData in place of a running stage and starts the next stage with it', async () => {
    await driver.approve(200, 2000, { size: 'xl' });
    const { id } = await run(200);
    const config = await driver.request(id, 'CONFIG');

    const pushed = await push(200, 'config', { vm: 'from-script', tags: { 'a.b': '$x' } });
    expect(pushed.status).toBe(201);
    expect(pushed.body.retrigger).toBeNull();
    expect(pushed.body.pipeline).toMatchObject({ id, run: 1 });
    expect(pushed.body.pipeline.stages[0]).toMatchObject({
      stage: 'CONFIG',
      state: 'OK',
      origin: 'pushed',
      pack_data: { vm: 'from-script', tags: { 'a.b': '$x' } },
    });
    const verify = await driver.request(id, 'VERIFY');
    expect(verify.messages[1]!.content).toContain(
      'PackData of the CONFIG stage:\n{"vm":"from-script","tags":{"a.b":"$x"}}',
    );

    // The processor's late answer for the replaced attempt changes nothing.
    await driver.answer(config, { output: '{"vm":"generated"}' });
    await driver.answer(verify, { output: '{"checked":true}' });
    await waitFor(async () => (await stageOf(200, 'VERIFY'))?.state === 'OK', { what: 'VERIFY OK' });
    expect(await stageOf(200, 'CONFIG')).toMatchObject({
      origin: 'pushed',
      pack_data: { vm: 'from-script' },
    });
    expect(await stageOf(200, 'VERIFY')).toMatchObject({ origin: 'generated', pack_data: { checked: true } });
    // The history keeps the pushed PackData; VERIFY's generated one is on its stage alone.
    expect((await stored(200)).packData).toBe(1);
  });

  it('keeps every replaced PackData in the history, each once, and a result that replaces none writes none', async () => {
    const history = async () =>
      (
        (await orchestrator
          .collection(PACK_DATA_COLLECTION)
          .find({ service_item_id: 206 })
          .toArray()) as unknown as { _id: string; data_json: string }[]
      )
        .map((entry) => `${entry._id} ${entry.data_json}`)
        .sort();
    await driver.approve(206, 2060, { n: 6 });
    const { id } = await run(206);
    await driver.answer(await driver.request(id, 'CONFIG'), { output: '{"vm":1}' });
    await driver.answer(await driver.request(id, 'VERIFY'), { output: '{"checked":1}' });
    await driver.answer(await driver.request(id, 'EXECUTION'), { output: '{"done":1}' });
    await waitFor(async () => (await stageOf(206, 'EXECUTION'))?.state === 'OK', { what: 'EXECUTION OK' });
    expect(await history()).toEqual([]);

    // VERIFY run again (a trigger) replaces its PackData, and its OK starts EXECUTION again (rule 1).
    const triggered = await orchestrator.as(owner, 'POST', `${PACK}trigger/service_item/206/verify/`);
    expect(triggered.status).toBe(202);
    await driver.answer(await driver.request(id, 'VERIFY', 2), { output: '{"checked":2}' });
    await driver.request(id, 'EXECUTION', 2);
    // A push replaces CONFIG's generated PackData and starts VERIFY again (rule 2).
    expect((await push(206, 'config', { vm: 'pushed' })).status).toBe(201);
    await driver.request(id, 'VERIFY', 3);
    expect(await history()).toEqual(
      [
        `pipeline-${id}-CONFIG-1 {"vm":1}`,
        `pipeline-${id}-CONFIG-2-pushed {"vm":"pushed"}`,
        `pipeline-${id}-EXECUTION-1 {"done":1}`,
        `pipeline-${id}-VERIFY-1 {"checked":1}`,
        `pipeline-${id}-VERIFY-2 {"checked":2}`,
      ].sort(),
    );
    expect(await stageOf(206, 'CONFIG')).toMatchObject({ origin: 'pushed', pack_data: { vm: 'pushed' } });
  });

  it('refuses bad pushes and stores nothing: not an object 400, unknown stage or item 404', async () => {
    await driver.approve(201, 2010, { n: 1 }, 2);
    await driver.approve(202, 2020, { n: 2 }, 3);
    await waitFor(
      async () =>
        (await orchestrator
          .collection('service_items')
          .countDocuments({ _id: { $in: [201, 202] } as never })) === 2,
      { what: 'items 201 and 202 known' },
    );
    for (const body of [[1, 2], 'text', 42, null]) {
      const refused = await push(201, 'verify', body);
      expect(refused.status).toBe(400);
      expect(refused.body.errors).toBeDefined();
    }
    expect((await push(201, 'deploy', { a: 1 })).status).toBe(404);
    expect((await push(999, 'verify', { a: 1 })).status).toBe(404);
    expect((await push(202, 'verify', { a: 1 })).status).toBe(404); // another owner's Service
    expect((await push(201, 'verify', { a: 1 }, otherOwner)).status).toBe(404);
    expect(await stored(201)).toEqual({ pipelines: [], packData: 0, notes: 0 });
    expect(await stored(202)).toEqual({ pipelines: [], packData: 0, notes: 0 });

    // An item without any run gets one holding the pushed stage; VERIFY has no next processor here.
    const first = await push(201, 'verify', { verdict: 'passed' });
    expect(first.status).toBe(201);
    expect(first.body.pipeline.stages.map((stage: Stage) => stage.state)).toEqual([null, 'OK', null]);
  });

  it('retriggers after a failure with the feedback and the earlier error in the CONFIG prompt', async () => {
    await driver.approve(203, 2030, { size: 's' });
    const first = await run(203);
    await driver.answer(await driver.request(first.id, 'CONFIG'), {
      ok: false,
      usage: null,
      error: { kind: 'invalid_output', message: 'the reply was not JSON' },
    });
    await waitFor(async () => (await stageOf(203, 'CONFIG'))?.state === 'FAILED', { what: 'CONFIG FAILED' });

    expect((await retrigger(203, { feedback: 42 })).status).toBe(400);
    expect((await retrigger(203, { feedback: 'x'.repeat(4001) })).status).toBe(400);
    expect((await retrigger(999, {})).status).toBe(404);
    expect((await retrigger(201, {})).status).toBe(409); // Service 2 has no config processor
    expect((await stored(203)).notes).toBe(0);

    const again = await retrigger(203, { feedback: 'Use the small VM size, the big one is sold out.' });
    expect(again.status).toBe(202);
    expect(again.body).toMatchObject({ service_item: 203, run: 2 });
    expect(again.body.stages[0]).toMatchObject({ stage: 'CONFIG', state: 'WAITING_FOR_RESPONSE' });
    const config = await driver.request(again.body.id, 'CONFIG');
    expect(config.messages).toEqual([
      { role: 'system', content: 'Do config.' },
      { role: 'user', content: 'Latest approved declaration of Service Item 203:\n{"size":"s"}' },
      {
        role: 'user',
        content: [
          "Execution context of Service Item 203: its earlier runs, oldest first, each with the declaration it ran on, every stage's state, error and PackData (generated, or pushed from outside), then the feedback and Pack Optimizer notes on that run.",
          `Run 1 (pipeline ${first.id}, on declaration 2030, the current one):`,
          '- CONFIG: FAILED (error: invalid_output: the reply was not JSON)',
          '- VERIFY: not run',
          '- EXECUTION: not run',
          'Feedback on run 1: Use the small VM size, the big one is sold out.',
        ].join('\n'),
      },
    ]);

    // Without a body: a third run, whose context still holds run 1's feedback and run 2's outcome.
    const third = await retrigger(203);
    expect(third.status).toBe(202);
    const content = (await driver.request(third.body.id, 'CONFIG')).messages[2]!.content;
    expect(content).toContain('Feedback on run 1: Use the small VM size');
    expect(content).toContain(
      `Run 2 (pipeline ${again.body.id}, on declaration 2030, the current one):\n- CONFIG: WAITING_FOR_RESPONSE`,
    );
  });

  it('pushes errors into EXECUTION with retrigger=true: a new run from CONFIG gets them in its execution context', async () => {
    await driver.approve(204, 2040, { app: 'shop' });
    const first = await run(204);
    await driver.answer(await driver.request(first.id, 'CONFIG'), { output: '{"replicas":1}' });
    await driver.answer(await driver.request(first.id, 'VERIFY'), { output: '{"ok":true}' });
    await driver.request(first.id, 'EXECUTION');

    const report = { errors: ['simulation: replica count 1 cannot survive a zone outage'] };
    const pushed = await push(204, 'execution', report, owner, '?retrigger=true');
    expect(pushed.status).toBe(201);
    expect(pushed.body.pipeline.stages[2]).toMatchObject({
      state: 'OK',
      origin: 'pushed',
      pack_data: report,
    });
    expect(pushed.body.retrigger).toMatchObject({ service_item: 204, run: 2 });
    const config = await driver.request(pushed.body.retrigger.id, 'CONFIG');
    expect(config.messages[2]!.content).toContain(
      '- EXECUTION: OK\n  PackData pushed from outside: {"errors":["simulation: replica count 1 cannot survive a zone outage"]}',
    );
    expect((await latest(204)).body.id).toBe(pushed.body.retrigger.id);
  });

  it("reports each run's progress to its Change Instance with growing versions", async () => {
    // Delivery is at least once: an event the relay sent again too (same id) counts once.
    const distinct = (all: TappedEvent[]) =>
      all
        .filter(
          (event) => event.type === events.pipelineProgress.type && event.data.change_instance_id === 2050,
        )
        .filter((event, index, kept) => kept.findIndex((other) => other.id === event.id) === index);
    const progressOf = async (count: number) =>
      distinct(
        await driver.tap.waitFor((all) => distinct(all).length >= count, `${count} progress events`),
      ).map((event) => event.data as { state: string; run: number; version: number; reasons: string[] });
    await driver.approve(205, 2050, { n: 5 });
    const first = await run(205);
    await driver.answer(await driver.request(first.id, 'CONFIG'), {
      ok: false,
      usage: null,
      error: { kind: 'timeout', message: 'too slow' },
    });
    expect(await progressOf(2)).toEqual([
      expect.objectContaining({ state: 'IN_PROGRESS', run: 1, reasons: [] }),
      expect.objectContaining({ state: 'FAILED', run: 1, reasons: ['CONFIG: timeout: too slow'] }),
    ]);
    const second = await retrigger(205);
    await driver.answer(await driver.request(second.body.id, 'CONFIG'), { output: '{"c":1}' });
    await driver.answer(await driver.request(second.body.id, 'VERIFY'), { output: '{"v":1}' });
    await driver.answer(await driver.request(second.body.id, 'EXECUTION'), { output: '{"e":1}' });
    const all = await progressOf(4);
    expect(all.map((event) => `${event.state}@${event.run}`)).toEqual([
      'IN_PROGRESS@1',
      'FAILED@1',
      'IN_PROGRESS@2',
      'COMPLETED@2',
    ]);
    const versions = all.map((event) => event.version);
    expect([...versions].sort((a, b) => a - b)).toEqual(versions);
    expect(new Set(versions).size).toBe(4);
  });
});
