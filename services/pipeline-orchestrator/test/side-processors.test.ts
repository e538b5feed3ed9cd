import { events } from '@pack/contracts';
import { waitFor } from '@pack/testkit';
import { EXECUTION_NOTES_COLLECTION, VALIDATIONS_COLLECTION } from '../src/service';
import { OrchestratorHarness, startOrchestrator, owner, processorBody } from './harness';
import { creation, PACK, PipelineDriver } from './pipeline-driver';

const created = (changeInstance: number, service: number, autoApproved = false) =>
  creation(changeInstance, service, { size: 'XL', region: 'eu' }, autoApproved);

/** The Change Instance Validator, the Pack Optimizer and the Universal Executor. */
describe('processors beside the stages', () => {
  let orchestrator: OrchestratorHarness;
  let driver: PipelineDriver;

  const validation = (id: number) =>
    orchestrator.collection(VALIDATIONS_COLLECTION).findOne({ _id: id as never });
  const latest = (item: number) =>
    orchestrator.as(owner, 'GET', `${PACK}pipelines/latest/service_item/${item}/`);
  const run = (item: number, number = 1) =>
    waitFor(
      async () => {
        const answer = await latest(item);
        return answer.body?.run === number && (answer.body as { id: number });
      },
      { what: `run ${number} of item ${item}` },
    );

  beforeAll(async () => {
    orchestrator = await startOrchestrator();
    driver = await PipelineDriver.start(orchestrator, [events.changeInstanceValidationDecided.type]);
    for (const service of [1, 2, 3]) await orchestrator.knowService({ service_id: service });
    await orchestrator.knowModel({ llm_model_id: 1 });
    const create = async (body: Record<string, unknown>) =>
      expect((await orchestrator.create(processorBody({ active: true, ...body }))).status).toBe(201);
    await create({ kind: 'change_instance_validator', prompt: 'Judge the declaration.' });
    await create({ service: 2, kind: 'config', prompt: 'Configure.' });
    await create({ service: 2, kind: 'pack_optimizer', prompt: 'Improve the prompts.' });
    await create({ service: 3, kind: 'config' });
    await create({ service: 3, kind: 'verify' });
    await create({
      service: 3,
      kind: 'universal_executor',
      prompt: 'Run it.',
      response_schema: { type: 'object', properties: { mine: { type: 'string' } } },
    });
  });
  afterAll(async () => {
    await driver.stop();
    await orchestrator.stop();
  });

  it('asks the validator once per new change instance and publishes its decision once', async () => {
    await driver.publish(events.changeInstanceCreated, created(3000, 1));
    const request = await driver.requestById('validator-3000');
    expect(JSON.parse(request.response_schema!)).toMatchObject({
      required: ['decision', 'reasons'],
      properties: { decision: { enum: ['approve', 'reject'] } },
    });
    expect(request.messages[0]).toEqual({ role: 'system', content: 'Judge the declaration.' });
    expect(request.messages[1]!.content).toContain('{"size":"XL","region":"eu"}');
    await driver.publish(events.changeInstanceCreated, created(3000, 1)); // redelivered

    const reply = { decision: 'reject', reasons: ['XL is not offered in eu'] };
    await driver.answer(request, { parsed_json: JSON.stringify(reply) });
    await driver.answer(request, { parsed_json: JSON.stringify({ decision: 'approve', reasons: [] }) });
    // A later instance through the same queue: both repeats were handled before its decision.
    await driver.publish(events.changeInstanceCreated, created(3010, 1));
    await driver.answer(await driver.requestById('validator-3010'), {
      parsed_json: JSON.stringify({ decision: 'approve', reasons: ['fine'] }),
    });
    await waitFor(async () => (await driver.decisions(3010)).length === 1, { what: 'the approval of 3010' });
    await waitFor(async () => (await driver.decisions(3000)).length === 1, { what: 'the rejection of 3000' });
    expect((await driver.decisions(3000))[0]!.data).toEqual({ change_instance_id: 3000, ...reply });
    expect((await driver.decisions(3010))[0]!.data).toEqual({
      change_instance_id: 3010,
      decision: 'approve',
      reasons: ['fine'],
    });
    expect(await orchestrator.collection(VALIDATIONS_COLLECTION).countDocuments({ _id: 3000 as never })).toBe(
      1,
    );
    expect(await validation(3000)).toMatchObject({ state: 'decided', decision: 'reject' });
  });

  it('decides nothing on a reply of the wrong shape, for auto-approved instances or without a validator', async () => {
    await driver.publish(events.changeInstanceCreated, created(3020, 1));
    await driver.answer(await driver.requestById('validator-3020'), { output: 'I think it is fine' });
    await waitFor(async () => (await validation(3020))?.state === 'failed', { what: '3020 failed' });
    expect((await validation(3020))!.error).toMatch(/not a \{decision, reasons\} object/);
    await driver.publish(events.changeInstanceCreated, created(3030, 1, true));
    await driver.publish(events.changeInstanceCreated, created(3040, 2));
    // Handled in order before this one, which is asked.
    await driver.publish(events.changeInstanceCreated, created(3050, 1));
    await driver.requestById('validator-3050');
    await waitFor(async () => (await validation(3050)) !== null, { what: '3050 stored' });
    expect(await validation(3030)).toBeNull();
    expect(await validation(3040)).toBeNull();
    expect(await driver.decisions(3020)).toEqual([]);
  });

  it("keeps the Pack Optimizer's notes on a finished run for the next run's CONFIG prompt", async () => {
    await driver.approve(301, 3100, { app: 'wiki' }, 2);
    const first = await run(301);
    await driver.answer(await driver.request(first.id, 'CONFIG'), {
      ok: false,
      usage: null,
      error: { kind: 'invalid_output', message: 'prose instead of JSON' },
    });
    const request = await driver.optimizerRequest(first.id);
    expect(request.response_schema).toBeNull();
    expect(request.messages[0]).toEqual({ role: 'system', content: 'Improve the prompts.' });
    expect(request.messages[1]!.content).toContain('ended FAILED');
    expect(request.messages[1]!.content).toContain(
      'CONFIG: FAILED (error: invalid_output: prose instead of JSON)',
    );
    await driver.answer(request, { output: 'Tell CONFIG to answer with one JSON object only.' });
    await driver.answer(request, { output: 'Tell CONFIG to answer with one JSON object only.' });
    await waitFor(
      async () =>
        (await orchestrator
          .collection(EXECUTION_NOTES_COLLECTION)
          .countDocuments({ service_item_id: 301 })) === 1,
      { what: 'the optimizer note' },
    );
    const again = await orchestrator.as(owner, 'POST', `${PACK}retrigger/service_item/301/`);
    expect(again.status).toBe(202);
    const config = await driver.request(again.body.id, 'CONFIG');
    expect(config.messages[2]!.content).toContain(
      'Pack Optimizer notes after run 1: Tell CONFIG to answer with one JSON object only.',
    );
    expect(
      await orchestrator.collection(EXECUTION_NOTES_COLLECTION).countDocuments({ service_item_id: 301 }),
    ).toBe(1);
  });

  it('runs EXECUTION with the Universal Executor and its managed schema, ignoring its custom one', async () => {
    await driver.approve(302, 3200, { app: 'blog' }, 3);
    const first = await run(302);
    await driver.answer(await driver.request(first.id, 'CONFIG'), { output: '{"c":1}' });
    await driver.answer(await driver.request(first.id, 'VERIFY'), { output: '{"v":1}' });
    const execution = await driver.request(first.id, 'EXECUTION');
    expect(execution.messages[0]).toEqual({ role: 'system', content: 'Run it.' });
    const schema = JSON.parse(execution.response_schema!);
    expect(schema).toMatchObject({
      title: 'Universal Executor result',
      required: ['status', 'summary', 'steps', 'output'],
    });
    expect(JSON.stringify(schema)).not.toContain('mine');
    const reply = {
      status: 'ok',
      summary: 'deployed',
      steps: [{ name: 'apply', status: 'ok' }],
      output: { url: 'x' },
    };
    await driver.answer(execution, { parsed_json: JSON.stringify(reply) });
    await waitFor(async () => (await latest(302)).body.stages[2].state === 'OK', { what: 'EXECUTION OK' });
    expect((await latest(302)).body.stages[2]).toMatchObject({ pack_data: reply, origin: 'generated' });
  });
});
