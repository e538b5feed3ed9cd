import { events } from '@pack/contracts';
import { metricsText, waitFor } from '@pack/testkit';
import { EXECUTION_NOTES_COLLECTION } from '../src/service';
import { owner, processorBody, startOrchestrator, type OrchestratorHarness } from './harness';
import { creation, generateResult, PACK, PipelineDriver } from './pipeline-driver';

const created = (changeInstance: number, service: number) => creation(changeInstance, service, { size: 'S' });

/** Messages each orchestrator queue has handled and acknowledged so far. */
async function handled(orchestrator: OrchestratorHarness): Promise<{ pipelines: number; side: number }> {
  const text = await metricsText(orchestrator.service.url);
  const acks = (consumer: string) =>
    Number(
      new RegExp(
        `^broker_consumed_total\\{[^}]*queue="[^"]*\\.${consumer.replace('.', '\\.')}"[^}]*outcome="ack"[^}]*\\} (\\d+)$`,
        'm',
      ).exec(text)?.[1] ?? 0,
    );
  return {
    pipelines: acks('pipeline-orchestrator.pipelines'),
    side: acks('pipeline-orchestrator.side-processors'),
  };
}

/**
 * docs/decisions/0036: a generate request names its kind (`reply_kind`), the llm-gateway echoes it
 * and publishes the result under that kind's event type, so each orchestrator queue receives
 * only the results meant for it.
 */
describe('generate results routed by kind', () => {
  let orchestrator: OrchestratorHarness;
  let driver: PipelineDriver;

  /** Waits until both queues have handled `more` messages each beyond `from`. */
  const settled = (from: { pipelines: number; side: number }, more: { pipelines: number; side: number }) =>
    waitFor(
      async () => {
        const now = await handled(orchestrator);
        return now.pipelines >= from.pipelines + more.pipelines && now.side >= from.side + more.side && now;
      },
      { what: `${more.pipelines} pipeline and ${more.side} side-processor messages handled` },
    );

  beforeAll(async () => {
    orchestrator = await startOrchestrator();
    driver = await PipelineDriver.start(orchestrator, [events.changeInstanceValidationDecided.type]);
    for (const service of [1, 2]) await orchestrator.knowService({ service_id: service });
    await orchestrator.knowModel({ llm_model_id: 1 });
    const create = async (body: Record<string, unknown>) =>
      expect((await orchestrator.create(processorBody({ active: true, ...body }))).status).toBe(201);
    await create({ kind: 'change_instance_validator', prompt: 'Judge the declaration.' });
    await create({ service: 2, kind: 'config', prompt: 'Configure.' });
    await create({ service: 2, kind: 'pack_optimizer', prompt: 'Improve the prompts.' });
  });
  afterAll(async () => {
    await driver.stop();
    await orchestrator.stop();
  });

  it('sends a validation result to the side-processor queue only, and a stage result to the pipeline queue only', async () => {
    const start = await handled(orchestrator);
    await driver.publish(events.changeInstanceCreated, created(5000, 1));
    const request = await driver.requestById('validator-5000');
    expect(request.reply_kind).toBe('validation');
    // The creation goes to both queues (the pipeline hears of every Change Instance).
    const before = await settled(start, { pipelines: 1, side: 1 });

    await driver.publish(events.llmValidationCompleted, {
      ...generateResult(request, { parsed_json: JSON.stringify({ decision: 'approve', reasons: ['ok'] }) }),
      reply_kind: 'validation',
    });
    await waitFor(async () => (await driver.decisions(5000)).length === 1, { what: 'the decision on 5000' });
    expect((await driver.decisions(5000))[0]!.data).toEqual({
      change_instance_id: 5000,
      decision: 'approve',
      reasons: ['ok'],
    });

    // A stage's result after it: the pipeline queue handles it; had the validation result reached
    // that queue too, it would have been handled there before it.
    await driver.approve(501, 5010, { app: 'wiki' }, 2);
    const run = await waitFor(
      async () => {
        const answer = await orchestrator.as(owner, 'GET', `${PACK}pipelines/latest/service_item/501/`);
        return answer.body?.run === 1 && (answer.body as { id: number });
      },
      { what: 'the run of item 501' },
    );
    const config = await driver.request(run.id, 'CONFIG');
    expect(config.reply_kind).toBe('stage');
    await driver.publish(events.llmGenerateCompleted, {
      ...generateResult(config, { output: '{"c":1}' }),
      reply_kind: 'stage',
    });
    await waitFor(
      async () =>
        (await orchestrator.as(owner, 'GET', `${PACK}pipelines/latest/service_item/501/`)).body.stages[0]
          .state === 'OK',
      { what: 'CONFIG OK' },
    );
    // The side-processor queue: the validation result. The pipeline queue: the approval and the
    // stage result, nothing more.
    const after = await settled(before, { pipelines: 2, side: 1 });
    expect(after).toEqual({ pipelines: before.pipelines + 2, side: before.side + 1 });
  });

  it("sends the Pack Optimizer's result to the side-processor queue under its own type", async () => {
    const start = await handled(orchestrator);
    await driver.approve(502, 5020, { app: 'blog' }, 2);
    const run = await waitFor(
      async () => {
        const answer = await orchestrator.as(owner, 'GET', `${PACK}pipelines/latest/service_item/502/`);
        return answer.body?.run === 1 && (answer.body as { id: number });
      },
      { what: 'the run of item 502' },
    );
    await driver.answer(await driver.request(run.id, 'CONFIG'), {
      ok: false,
      usage: null,
      error: { kind: 'invalid_output', message: 'prose' },
    });
    const request = await driver.optimizerRequest(run.id);
    expect(request.reply_kind).toBe('optimization');
    // The approval and the failed result, acknowledged (the optimizer's request goes out before
    // the failed result's ack).
    const before = await settled(start, { pipelines: 2, side: 0 });
    await driver.publish(events.llmOptimizationCompleted, {
      ...generateResult(request, { output: 'Answer with JSON only.' }),
      reply_kind: 'optimization',
    });
    await waitFor(
      async () =>
        (await orchestrator
          .collection(EXECUTION_NOTES_COLLECTION)
          .countDocuments({ service_item_id: 502, kind: 'optimizer' })) === 1,
      { what: 'the optimizer note' },
    );
    expect(await settled(before, { pipelines: 0, side: 1 })).toEqual({
      pipelines: before.pipelines,
      side: before.side + 1,
    });
  });

  it('routes a result without reply_kind as before, by its request id (messages in flight during a rolling upgrade)', async () => {
    // As a request sent by an orchestrator of before, answered by an llm-gateway of before:
    // `llm.generate.completed.v1`, no `reply_kind`.
    await driver.publish(events.changeInstanceCreated, created(5030, 1));
    const request = await driver.requestById('validator-5030');
    const { reply_kind: _kind, ...old } = generateResult(request, {
      parsed_json: JSON.stringify({ decision: 'reject', reasons: ['too big'] }),
    });
    expect(old).not.toHaveProperty('reply_kind');
    await driver.publish(events.llmGenerateCompleted, old);
    await waitFor(async () => (await driver.decisions(5030)).length === 1, { what: 'the decision on 5030' });
    expect((await driver.decisions(5030))[0]!.data).toEqual({
      change_instance_id: 5030,
      decision: 'reject',
      reasons: ['too big'],
    });
  });
});
