import { events, PROCESSOR_EVENTS, type ProcessorSnapshot } from '@pack/contracts';
import { publishEvent, waitFor } from '@pack/testkit';
import { ModelUsageRepository } from '../src/data/model-usage-repository';
import { LlmGatewayHarness, startLlmGateway, MODELS, admin, examples } from './harness';

describe('deleting a model an active AI processor uses', () => {
  let llm: LlmGatewayHarness;

  beforeAll(async () => {
    llm = await startLlmGateway();
  });
  afterAll(() => llm.stop());

  const createModel = async (name: string): Promise<number> => {
    const created = await llm.create({ ...examples.vendor1, name });
    expect(created.status).toBe(201);
    return (created.body as { id: number }).id;
  };
  const remove = (id: number) => llm.as(admin, 'DELETE', `${MODELS}${id}/`);
  /** Publishes as the orchestrator would, and waits until the projection holds that version. */
  const publish = async (event: (typeof PROCESSOR_EVENTS)[number], snapshot: ProcessorSnapshot) => {
    await publishEvent(process.env.AMQP_URL!, llm.env.BROKER_NAMESPACE!, event, snapshot);
    await waitFor(
      async () => {
        const stored = (await llm.rawDatabase()).processor_models ?? [];
        return (
          stored.some((p) => p._id === snapshot.processor_id && p.version === snapshot.version) || undefined
        );
      },
      { what: `processor ${snapshot.processor_id} version ${snapshot.version} applied` },
    );
  };
  const snapshot = (over: Partial<ProcessorSnapshot>): ProcessorSnapshot => ({
    processor_id: 1,
    service_id: 10,
    kind: 'config',
    llm_model_id: 0,
    active: true,
    deleted: false,
    version: 1,
    ...over,
  });

  it('answers 409 naming the processor while it is active, and deletes once it is deactivated', async () => {
    const used = await createModel('Used by config');
    const unused = await createModel('Used by nobody');
    await publish(events.processorCreated, snapshot({ processor_id: 71, llm_model_id: used }));

    const refused = await remove(used);
    expect(refused.status).toBe(409);
    expect(refused.headers.get('content-type')).toMatch(/application\/problem\+json/);
    expect((refused.body as { detail: string }).detail).toContain('71');
    expect((await llm.read(used)).status).toBe(200);
    expect((await remove(unused)).status).toBe(204);

    await publish(
      events.processorActivated,
      snapshot({ processor_id: 71, llm_model_id: used, active: false, version: 2 }),
    );
    expect((await remove(used)).status).toBe(204);
    expect((await llm.read(used)).status).toBe(404);
  });

  it('frees a model when its processor moves to another model or is deleted', async () => {
    const first = await createModel('First model');
    const second = await createModel('Second model');
    await publish(events.processorCreated, snapshot({ processor_id: 72, llm_model_id: first }));
    expect((await remove(first)).status).toBe(409);

    await publish(events.processorUpdated, snapshot({ processor_id: 72, llm_model_id: second, version: 2 }));
    expect((await remove(second)).status).toBe(409);
    expect((await remove(first)).status).toBe(204);

    await publish(
      events.processorDeleted,
      snapshot({ processor_id: 72, llm_model_id: second, deleted: true, active: false, version: 3 }),
    );
    expect((await remove(second)).status).toBe(204);
  });

  it('an inactive processor does not hold its model', async () => {
    const model = await createModel('Held by an inactive one');
    await publish(
      events.processorCreated,
      snapshot({ processor_id: 73, llm_model_id: model, active: false }),
    );
    expect((await remove(model)).status).toBe(204);
  });
});

describe('the processor projection', () => {
  let llm: LlmGatewayHarness;
  let usage: ModelUsageRepository;

  beforeAll(async () => {
    llm = await startLlmGateway();
    usage = new ModelUsageRepository(llm.service.context.mongo.connection);
  });
  afterAll(() => llm.stop());

  const at = (version: number, over: Partial<ProcessorSnapshot> = {}): ProcessorSnapshot => ({
    processor_id: 5,
    service_id: 1,
    kind: 'verify',
    llm_model_id: 100,
    active: true,
    deleted: false,
    version,
    ...over,
  });

  it('ignores an older or repeated version, so a late event never undoes a newer one', async () => {
    await usage.apply(at(3, { llm_model_id: 300 }));
    await usage.apply(at(2, { llm_model_id: 200 }));
    await usage.apply(at(3, { llm_model_id: 999 }));
    expect(await usage.activeProcessorsUsing(300, 10)).toEqual([5]);
    expect(await usage.activeProcessorsUsing(200, 10)).toEqual([]);
    expect(await usage.activeProcessorsUsing(999, 10)).toEqual([]);
  });

  it('keeps a deleted processor deleted when an older update arrives after the deletion', async () => {
    await usage.apply(at(4, { processor_id: 6, llm_model_id: 400, deleted: true, active: false }));
    await usage.apply(at(3, { processor_id: 6, llm_model_id: 400 }));
    expect(await usage.activeProcessorsUsing(400, 10)).toEqual([]);
  });

  it('settles concurrent versions of one processor on the newest', async () => {
    const versions = Array.from({ length: 20 }, (_, i) =>
      at(i + 1, { processor_id: 7, llm_model_id: 500 + i }),
    );
    await Promise.all(versions.reverse().map((snapshot) => usage.apply(snapshot)));
    expect(await usage.activeProcessorsUsing(519, 10)).toEqual([7]);
    for (let model = 500; model < 519; model += 1)
      expect(await usage.activeProcessorsUsing(model, 10)).toEqual([]);
  });
});
