import { waitFor } from '@pack/testkit';
import { PipelineRepository } from '../src/data/pipeline-repository';
import type { PipelineRecord } from '../src/domain/records/pipeline-records';
import { PIPELINES_COLLECTION } from '../src/service';
import { OrchestratorHarness, startOrchestrator, owner, processorBody } from './harness';
import { PACK, PipelineDriver } from './pipeline-driver';

/**
 * One live run per Service Item (docs/decisions/0024, "One live run"): a result of the run a
 * retrigger replaces, landing right after the new run's insert, starts no further stage.
 */
describe('a retrigger and a result of the run it replaces at the same moment', () => {
  let orchestrator: OrchestratorHarness;
  let driver: PipelineDriver;
  // The real insert, wrapped below for one call (and put back after it).
  // eslint-disable-next-line @typescript-eslint/unbound-method
  const insert = PipelineRepository.prototype.insert;

  beforeAll(async () => {
    orchestrator = await startOrchestrator();
    driver = await PipelineDriver.start(orchestrator);
    await orchestrator.knowService({ service_id: 1 });
    await orchestrator.knowModel({ llm_model_id: 1 });
    for (const kind of ['config', 'verify'])
      expect(
        (await orchestrator.create(processorBody({ kind, active: true, prompt: `Do ${kind}.` }))).status,
      ).toBe(201);
  });
  afterAll(async () => {
    PipelineRepository.prototype.insert = insert;
    await driver?.stop();
    await orchestrator?.stop();
  });

  const stored = (id: number) =>
    orchestrator
      .collection(PIPELINES_COLLECTION)
      .findOne({ _id: id as never }) as Promise<PipelineRecord | null>;

  it('spec 3.1 rule 4 "Retrigger restarts the pipeline from CONFIG": the replaced run starts no VERIFY even when its CONFIG result lands just after the new run is inserted', async () => {
    await driver.approve(401, 4010, { n: 1 });
    const first = await waitFor(
      async () =>
        (await orchestrator.as(owner, 'GET', `${PACK}pipelines/latest/service_item/401/`)).body?.id as
          number | undefined,
      { what: 'run 1' },
    );
    const config = await driver.request(first, 'CONFIG');
    // The result of run 1's CONFIG is handled between the retrigger's insert and whatever follows it.
    PipelineRepository.prototype.insert = async function (this: PipelineRepository, ...args) {
      const inserted = await insert.apply(this, args);
      if (args[0].origin.startsWith('retrigger:')) {
        await driver.answer(config, { output: '{"vm":"old"}', cost: '0.01' });
        await waitFor(async () => (await stored(first))?.stages.CONFIG.state === 'OK', {
          what: "run 1's CONFIG result handled",
        });
      }
      return inserted;
    };
    const again = await orchestrator.as(owner, 'POST', `${PACK}retrigger/service_item/401/`);
    PipelineRepository.prototype.insert = insert;
    expect(again.status).toBe(202);
    const old = (await stored(first))!;
    expect(old.superseded_by).toBe(again.body.id);
    expect(old.stages.CONFIG).toMatchObject({ state: 'OK', superseded: true, cost: '0.01' });
    expect(old.stages.VERIFY.state).toBeNull();
    expect(old.costs).toEqual(['0.01']);
    // The new run goes on; run 1 sent no VERIFY request.
    const next = await driver.request(again.body.id, 'CONFIG');
    await driver.answer(next, { output: '{"vm":"new"}' });
    await driver.request(again.body.id, 'VERIFY');
    const requested = (await driver.tap.drain()).map((event) => event.data.request_id as string);
    expect(requested).not.toContain(`pipeline-${first}-VERIFY-1`);
  });
});
