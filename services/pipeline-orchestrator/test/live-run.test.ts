import { events } from '@pack/contracts';
import { OUTBOX_FIELD, OutboxRelay } from '@pack/db';
import { waitFor } from '@pack/testkit';
import { PipelineRepository } from '../src/data/pipeline-repository';
import type { PipelineRecord } from '../src/domain/records/pipeline-records';
import { PIPELINES_COLLECTION } from '../src/service';
import { OrchestratorHarness, startOrchestrator, owner, processorBody } from './harness';
import { approval, PACK, PipelineDriver } from './pipeline-driver';

/**
 * One live run per Service Item (docs/decisions/0024, "One live run"): a result of the run a
 * retrigger replaces, landing right after the new run's insert, starts no further stage; nor does
 * the new run when its Change Instance's cancellation lands there (docs/decisions/0055).
 */
describe('a retrigger and what lands right after its insert', () => {
  let orchestrator: OrchestratorHarness;
  let driver: PipelineDriver;
  // The real insert, wrapped below for one call (and put back after it).
  // eslint-disable-next-line @typescript-eslint/unbound-method
  const insert = PipelineRepository.prototype.insert;
  // eslint-disable-next-line @typescript-eslint/unbound-method
  const latest = PipelineRepository.prototype.latest;
  // eslint-disable-next-line @typescript-eslint/unbound-method
  const kick = OutboxRelay.prototype.kick;

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
    PipelineRepository.prototype.latest = latest;
    OutboxRelay.prototype.kick = kick;
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

  it('a retrigger in flight when its Change Instance is cancelled starts nothing: its first request is taken back, the run shows the cancellation (docs/decisions/0055)', async () => {
    await driver.approve(402, 4020, { n: 2 });
    const first = await waitFor(
      async () =>
        (await orchestrator.as(owner, 'GET', `${PACK}pipelines/latest/service_item/402/`)).body?.id as
          number | undefined,
      { what: 'run 1' },
    );
    await driver.request(first, 'CONFIG');
    // The relay held while the retrigger runs: its periodic kicks (outbox and sweeper, 5 s) would
    // otherwise publish the new run's request while the cancellation travels the broker, and the
    // request would be sent, not taken back (a request already sent is the e2e cancellation test of
    // pipeline-costs: its result is recorded and starts nothing).
    OutboxRelay.prototype.kick = () => undefined;
    // The cancellation is handled, and has marked the item's runs, right after the retrigger's insert.
    PipelineRepository.prototype.insert = async function (this: PipelineRepository, ...args) {
      const inserted = await insert.apply(this, args);
      if (args[0].origin.startsWith('retrigger:')) {
        await driver.publish(events.changeInstanceStateChanged, {
          ...approval(402, 4020, { n: 2 }),
          state: 'CANCELLED',
          old_state: 'IN_PROGRESS',
        });
        await waitFor(async () => (await stored(args[0]._id))?.cancelled !== undefined, {
          what: 'the new run marked cancelled',
        });
      }
      return inserted;
    };
    const again = await orchestrator.as(owner, 'POST', `${PACK}retrigger/service_item/402/`);
    PipelineRepository.prototype.insert = insert;
    OutboxRelay.prototype.kick = kick;
    expect(again.status).toBe(202);
    expect(again.body.cancelled).toMatchObject({ change_instance: 4020 });
    const run = (await stored(again.body.id)) as PipelineRecord & Record<string, unknown>;
    expect(run.stages.CONFIG).toMatchObject({ state: 'FAILED', error: again.body.cancelled.reason });
    expect(run[OUTBOX_FIELD]).toEqual([]);
    expect((await stored(first))?.cancelled).toMatchObject({ change_instance_id: 4020 });
    // Asked again now, the retrigger is refused naming the state.
    const refused = await orchestrator.as(owner, 'POST', `${PACK}retrigger/service_item/402/`);
    expect(refused.status).toBe(409);
    expect(refused.body.detail).toContain('Change Instance 4020');
    const requested = (await driver.tap.drain()).map((event) => event.data.request_id as string);
    expect(requested).not.toContain(`pipeline-${again.body.id}-CONFIG-1`);
  });

  it('a push in flight when its Change Instance is cancelled stores nothing and starts no next stage: 409 naming the state (docs/decisions/0055)', async () => {
    const cancel = {
      ...approval(403, 4030, { n: 3 }),
      state: 'CANCELLED' as const,
      old_state: 'IN_PROGRESS' as const,
    };
    await driver.approve(403, 4030, { n: 3 });
    const first = await waitFor(
      async () =>
        (await orchestrator.as(owner, 'GET', `${PACK}pipelines/latest/service_item/403/`)).body?.id as
          number | undefined,
      { what: 'run 1' },
    );
    await driver.request(first, 'CONFIG');
    // The push reads the latest run; the cancellation marks it before the push's move.
    PipelineRepository.prototype.latest = async function (this: PipelineRepository, ...args) {
      const read = await latest.apply(this, args);
      if (args[0] === 403) {
        PipelineRepository.prototype.latest = latest;
        await driver.publish(events.changeInstanceStateChanged, cancel);
        await waitFor(async () => (await stored(first))?.cancelled !== undefined, {
          what: 'run 1 marked cancelled',
        });
      }
      return read;
    };
    const pushed = await orchestrator.as(owner, 'POST', `${PACK}data/service_item/403/config/`, {
      vm: 'pushed',
    });
    PipelineRepository.prototype.latest = latest;
    expect(pushed.status).toBe(409);
    expect(pushed.body.detail).toContain('Change Instance 4030');
    const run = (await stored(first))!;
    expect(run.stages.CONFIG).toMatchObject({ state: 'WAITING_FOR_RESPONSE', attempt: 1 });
    expect(run.stages.VERIFY.state).toBeNull();
  });
});
