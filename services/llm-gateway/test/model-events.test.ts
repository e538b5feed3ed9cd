import { EventTap, outboxDrained, type TappedEvent } from '@pack/testkit';
import { LlmGatewayHarness, startLlmGateway, MODELS, admin, examples } from './harness';

describe('llm.model.changed.v1: what the orchestrator learns of models', () => {
  let llm: LlmGatewayHarness;
  let tap: EventTap;

  beforeAll(async () => {
    llm = await startLlmGateway();
    tap = await EventTap.start(process.env.AMQP_URL!, llm.env.BROKER_NAMESPACE!, ['llm.model.#']);
  });
  afterAll(async () => {
    await tap.stop();
    await llm.stop();
  });

  const of = (id: number) => (event: TappedEvent) =>
    (event.data as { llm_model_id: number }).llm_model_id === id;
  const eventsOf = async (id: number, count: number) => {
    const received = await tap.waitFor(
      (events) => events.filter(of(id)).length >= count,
      `${count} events of model ${id}`,
    );
    return received.filter(of(id)).map((event) => event.data as Record<string, unknown>);
  };

  it('publishes a versioned snapshot on create, update and delete, and nothing secret', async () => {
    const created = await llm.create({ ...examples.vendor1, name: 'Evented', timeout: 12.5 });
    expect(created.status).toBe(201);
    const id = (created.body as { id: number }).id;
    expect((await llm.patch(id, { name: 'Evented renamed', model_name: 'gpt-4.1' })).status).toBe(200);
    expect((await llm.as(admin, 'DELETE', `${MODELS}${id}/`)).status).toBe(204);

    const published = await eventsOf(id, 3);
    expect(published).toEqual([
      {
        llm_model_id: id,
        name: 'Evented',
        provider: 'vendor1',
        model_name: 'gpt-4o-mini',
        timeout: 12.5,
        // The orchestrator's stuck-stage deadline covers the fallbacks' calls.
        fallback_models: [],
        deleted: false,
        version: 1,
      },
      expect.objectContaining({ name: 'Evented renamed', model_name: 'gpt-4.1', deleted: false, version: 2 }),
      expect.objectContaining({ name: 'Evented renamed', deleted: true, version: 3 }),
    ]);
    expect(JSON.stringify(await tap.drain())).not.toContain('PLAINTEXT');
    await outboxDrained(llm.service);
  });

  it('gives concurrent edits distinct versions, the last of which matches what is stored', async () => {
    const created = await llm.create({ ...examples.vendor1, name: 'Raced' });
    const id = (created.body as { id: number }).id;
    const answers = await Promise.all(
      Array.from({ length: 8 }, (_, i) => llm.patch(id, { model_name: `model-${i}` })),
    );
    expect(answers.map((answer) => answer.status)).toEqual(Array(8).fill(200));

    const published = await eventsOf(id, 9);
    const versions = published.map((event) => event.version as number).sort((a, b) => a - b);
    expect(versions).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
    const newest = published.find((event) => event.version === 9)!;
    expect(newest.model_name).toBe((await llm.read(id)).body.model_name);
  });

  it('frees the name of a deleted model and hides it everywhere', async () => {
    const first = await llm.create({ ...examples.vendor1, name: 'Reused name' });
    const id = (first.body as { id: number }).id;
    expect((await llm.as(admin, 'DELETE', `${MODELS}${id}/`)).status).toBe(204);
    expect((await llm.read(id)).status).toBe(404);
    expect((await llm.patch(id, { prompt: 'x' })).status).toBe(404);
    expect((await llm.as(admin, 'DELETE', `${MODELS}${id}/`)).status).toBe(404);
    const listed = await llm.as(admin, 'GET', `${MODELS}?limit=100`);
    expect((listed.body.results as { id: number }[]).map((model) => model.id)).not.toContain(id);
    expect((await llm.create({ ...examples.vendor1, name: 'Reused name' })).status).toBe(201);
    const stored = (await llm.allStoredModels()).find((model) => model._id === id);
    expect(JSON.stringify(stored ?? {})).not.toContain('sk-vendor1');
  });
});
