import { EventTap, outboxDrained, TcpProxy, waitFor, type TappedEvent } from '@pack/testkit';
import { DirectoryRepository } from '../src/data/directory-repository';
import { PROCESSORS_COLLECTION } from '../src/service';
import { OrchestratorHarness, startOrchestrator, processorBody } from './harness';

/** "type version active deleted" per processor event, in version order. */
function historyOf(events: TappedEvent[], processorId: number): string[] {
  return events
    .filter((event) => event.data.processor_id === processorId)
    .sort((a, b) => a.data.version - b.data.version)
    .map(
      (event) =>
        `${event.type.split('.')[2]} v${event.data.version} model=${event.data.llm_model_id} active=${event.data.active} deleted=${event.data.deleted}`,
    );
}

describe('processor events', () => {
  let orchestrator: OrchestratorHarness;
  let tap: EventTap;

  beforeAll(async () => {
    orchestrator = await startOrchestrator();
    tap = await EventTap.start(process.env.AMQP_URL!, orchestrator.env.BROKER_NAMESPACE!, ['pipeline.#']);
    await orchestrator.knowService({ service_id: 1 });
    await orchestrator.knowModel({ llm_model_id: 1 });
    await orchestrator.knowModel({ llm_model_id: 2 });
  });
  afterAll(async () => {
    await tap.stop();
    await orchestrator.stop();
  });

  it('publishes created, updated, activated and a deleted tombstone, each with the next version', async () => {
    const id = (await orchestrator.create(processorBody())).body.id as number;
    await orchestrator.patch(id, { llm_model: 2 });
    await orchestrator.patch(id, { active: true });
    await orchestrator.patch(id, { prompt: 'Better prompt' });
    await orchestrator.remove(id);

    await outboxDrained(orchestrator.service);
    const events = await tap.drain();
    expect(historyOf(events, id)).toEqual([
      'created v1 model=1 active=false deleted=false',
      'updated v2 model=2 active=false deleted=false',
      'activated v3 model=2 active=true deleted=false',
      'updated v4 model=2 active=true deleted=false',
      'deleted v5 model=2 active=false deleted=true',
    ]);
    expect(events.find((event) => event.data.processor_id === id)).toMatchObject({
      source: 'pipeline-orchestrator',
      data: { service_id: 1, kind: 'config' },
    });
  });

  it('publishes nothing for a refused change', async () => {
    const id = (await orchestrator.create(processorBody({ name: 'Quiet' }))).body.id as number;
    await outboxDrained(orchestrator.service);
    const before = historyOf(await tap.drain(), id);
    expect((await orchestrator.patch(id, { llm_model: 999 })).status).toBe(400);
    expect(
      (await orchestrator.patch(id, { kind: 'change_instance_validator', response_schema: {} })).status,
    ).toBe(400);
    await outboxDrained(orchestrator.service);
    expect(historyOf(await tap.drain(), id)).toEqual(before);
  });
});

describe('processor events while RabbitMQ is down', () => {
  let proxy: TcpProxy;
  let orchestrator: OrchestratorHarness;
  let tap: EventTap;

  beforeAll(async () => {
    const amqpUrl = process.env.AMQP_URL!;
    proxy = await TcpProxy.forUrl(amqpUrl).start();
    orchestrator = await startOrchestrator({ env: { AMQP_URL: proxy.rewrite(amqpUrl) } });
    tap = await EventTap.start(amqpUrl, orchestrator.env.BROKER_NAMESPACE!, ['pipeline.#']);
    await orchestrator.knowService({ service_id: 1 });
    await orchestrator.knowModel({ llm_model_id: 1 });
  });
  afterAll(async () => {
    proxy.restore();
    await tap.stop();
    await orchestrator.stop();
    await proxy.stop();
  });

  it('accepts changes during the outage and publishes every event once the broker is back', async () => {
    proxy.cut();
    await waitFor(() => !orchestrator.service.context.broker.isReady(), { what: 'broker gone' });
    const id = (await orchestrator.create(processorBody({ active: true }))).body.id as number;
    expect((await orchestrator.patch(id, { active: false })).status).toBe(200);
    const stored = await orchestrator.collection(PROCESSORS_COLLECTION).findOne({ _id: id as never });
    expect(stored?._outbox).toHaveLength(2);
    expect(await tap.drain()).toEqual([]);

    proxy.restore();
    await outboxDrained(orchestrator.service);
    expect(historyOf(await tap.drain(), id)).toEqual([
      'created v1 model=1 active=true deleted=false',
      'activated v2 model=1 active=false deleted=false',
    ]);
  });
});

describe('the Service and model projections', () => {
  it('keep a deleted model and Service deleted when an older snapshot arrives late', async () => {
    const orchestrator = await startOrchestrator();
    try {
      const directory = new DirectoryRepository(orchestrator.service.context.mongo.connection);
      const model = { llm_model_id: 7, name: 'm', provider: 'vendor1', model_name: 'x', timeout: 60 };
      expect(await directory.applyModel({ ...model, deleted: true, version: 2 })).toBe(true);
      expect(await directory.applyModel({ ...model, deleted: false, version: 1 })).toBe(false);
      expect(await directory.applyModel({ ...model, deleted: false, version: 2 })).toBe(false);
      expect(await directory.modelExists(7)).toBe(false);

      const service = { service_id: 8, name: 's', owner: { id: 10, name: 'o' } };
      await directory.applyService({ ...service, deleted: false, version: 1 });
      await directory.applyService({ ...service, deleted: true, version: 3 });
      await directory.applyService({
        ...service,
        owner: { id: 99, name: 'late' },
        deleted: false,
        version: 2,
      });
      expect(await directory.service(8)).toBeNull();
      expect(await directory.serviceIdsOwnedBy(99)).toEqual([]);
    } finally {
      await orchestrator.stop();
    }
  });
});
