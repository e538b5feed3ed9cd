import { waitFor } from '@pack/testkit';
import { PIPELINES_COLLECTION } from '../src/service';
import { OrchestratorHarness, startOrchestrator, processorBody } from './harness';
import { PipelineDriver } from './pipeline-driver';

/** Acknowledged messages of this replica's processor-cache queue, from its metrics. */
async function cacheEventsHandled(replica: OrchestratorHarness): Promise<number> {
  const text = await (await fetch(`${replica.service.metricsUrl}/metrics`)).text();
  return text
    .split('\n')
    .filter((line) => line.startsWith('broker_consumed_total{') && line.includes('processor-cache'))
    .filter((line) => line.includes('outcome="ack"'))
    .reduce((sum, line) => sum + Number(line.split(' ').at(-1)), 0);
}

/**
 * A replica remembers a Service's active processors for the next stage (processor-cache.ts).
 * Another replica's change must reach it through the broadcast processor events: here the cache
 * lives as long as the test, so only that event can make the remembered "no verify processor"
 * go away.
 */
describe('remembered processors across replicas', () => {
  let a: OrchestratorHarness;
  let driver: PipelineDriver;

  beforeAll(async () => {
    a = await startOrchestrator({
      env: {
        PIPELINE_PROCESSOR_CACHE_MS: '600000',
      },
    });
    driver = await PipelineDriver.start(a);
    await a.knowService({ service_id: 1 });
    await a.knowModel({ llm_model_id: 1 });
    expect((await a.create(processorBody({ kind: 'config', active: true }))).status).toBe(201);
  });
  afterAll(async () => {
    await driver.stop();
    await a.stop();
  });

  const pipelineOf = (item: number) =>
    waitFor(
      async () =>
        (await a.collection(PIPELINES_COLLECTION).findOne({ service_item_id: item })) as {
          _id: number;
        } | null,
      { what: `the pipeline of item ${item}` },
    );
  const stateOf = async (pipelineId: number, stage: string) =>
    (
      (await a.collection(PIPELINES_COLLECTION).findOne({ _id: pipelineId as never })) as {
        stages: Record<string, { state: string | null }>;
      } | null
    )?.stages[stage]?.state;

  it('starts the next stage with a processor another replica activated after this one looked', async () => {
    // Replica A runs CONFIG with no verify processor: it remembers that there is none.
    await driver.approve(1, 1, { size: 'small' });
    const first = (await pipelineOf(1))._id;
    await driver.answer(await driver.request(first, 'CONFIG'), { output: '{"vm":1}' });
    await waitFor(async () => (await stateOf(first, 'CONFIG')) === 'OK', { what: 'CONFIG OK' });
    expect(await stateOf(first, 'VERIFY')).toBeNull();

    // Replica B activates a verify processor, then goes away: every result goes to A from now.
    const before = await cacheEventsHandled(a);
    const b = await a.replica();
    try {
      expect((await b.create(processorBody({ kind: 'verify', active: true }))).status).toBe(201);
      await waitFor(async () => (await cacheEventsHandled(a)) > before, {
        what: "A hears of B's processor",
      });
    } finally {
      await b.stop();
    }

    await driver.approve(2, 2, { size: 'large' });
    const second = (await pipelineOf(2))._id;
    await driver.answer(await driver.request(second, 'CONFIG'), { output: '{"vm":2}' });
    const verify = await driver.request(second, 'VERIFY');
    expect(verify.processor_id).not.toBeNull();
    expect(await stateOf(second, 'VERIFY')).toMatch(/SCHEDULED|WAITING_FOR_RESPONSE/);
  });

  it('forgets at once what its own change makes wrong', async () => {
    const verify = (
      await a.as({ id: 1, username: 'ada', role: 'admin' }, 'GET', '/v1/ai/processors/?kind=verify')
    ).body as { results: { id: number }[] };
    expect((await a.patch(verify.results[0]!.id, { active: false })).status).toBe(200);

    await driver.approve(3, 3, { size: 'medium' });
    const third = (await pipelineOf(3))._id;
    await driver.answer(await driver.request(third, 'CONFIG'), { output: '{"vm":3}' });
    await waitFor(async () => (await stateOf(third, 'CONFIG')) === 'OK', { what: 'CONFIG OK' });
    expect(await stateOf(third, 'VERIFY')).toBeNull();
  });

  it('starts the next stage with a processor this replica created after it had remembered that there was none', async () => {
    // The case above left A remembering "no active verify processor" for the Service.
    const created = await a.create(processorBody({ kind: 'verify', name: 'Second verifier', active: true }));
    expect(created.status).toBe(201);

    await driver.approve(4, 4, { size: 'tiny' });
    const fourth = (await pipelineOf(4))._id;
    await driver.answer(await driver.request(fourth, 'CONFIG'), { output: '{"vm":4}' });
    const verify = await driver.request(fourth, 'VERIFY');
    expect(verify.processor_id).toBe((created.body as { id: number }).id);
  });
});
