import { ACTIVE_SLOTS_COLLECTION } from '../src/service';
import { OrchestratorHarness, startOrchestrator, admin, owner, processorBody } from './harness';

describe('at most one active processor per Service and kind', () => {
  let first: OrchestratorHarness;
  let second: OrchestratorHarness;

  beforeAll(async () => {
    first = await startOrchestrator();
    // A second replica on the same database and broker namespace.
    second = await first.replica();
    for (const service_id of [1, 2, 3, 4, 5]) await first.knowService({ service_id });
    await first.knowModel({ llm_model_id: 1 });
  });
  afterAll(async () => {
    await second.stop();
    await first.stop();
  });

  const activeOf = async (service: number, kind: string) =>
    (
      await first.as(admin, 'GET', `/v1/ai/processors/?service=${service}&kind=${kind}&limit=500`)
    ).body.results
      .filter((p: { active: boolean }) => p.active)
      .map((p: { id: number }) => p.id);

  it('answers 409 to a second active one, allows other kinds, and frees the slot on deactivation or delete', async () => {
    const a = await first.create(processorBody({ service: 1, active: true }));
    expect(a.status).toBe(201);
    const b = await first.create(processorBody({ service: 1, active: true, name: 'Second' }));
    expect(b.status).toBe(409);
    expect(b.body.detail).toContain(`AI processor ${a.body.id} is already the active config processor`);

    const verify = await first.create(processorBody({ service: 1, kind: 'verify', active: true }));
    expect(verify.status).toBe(201);
    const inactive = await first.create(processorBody({ service: 1, name: 'Standby' }));
    expect(inactive.status).toBe(201);
    expect((await first.patch(inactive.body.id, { active: true })).status).toBe(409);
    expect(await activeOf(1, 'config')).toEqual([a.body.id]);

    expect((await first.patch(a.body.id, { active: false })).status).toBe(200);
    expect((await second.patch(inactive.body.id, { active: true })).status).toBe(200);
    expect(await activeOf(1, 'config')).toEqual([inactive.body.id]);

    expect((await first.remove(inactive.body.id)).status).toBe(204);
    expect((await second.patch(a.body.id, { active: true })).status).toBe(200);
    expect(await activeOf(1, 'config')).toEqual([a.body.id]);
  });

  it('moves the slot when an active processor changes kind', async () => {
    const config = await first.create(processorBody({ service: 2, active: true }));
    const blockedVerify = await first.create(processorBody({ service: 2, kind: 'verify', active: true }));
    expect(blockedVerify.status).toBe(201);
    expect((await first.patch(config.body.id, { kind: 'verify' })).status).toBe(409);
    expect((await first.patch(config.body.id, { kind: 'execution' })).status).toBe(200);
    const newConfig = await first.create(processorBody({ service: 2, active: true, name: 'New config' }));
    expect(newConfig.status).toBe(201);
    expect(await activeOf(2, 'execution')).toEqual([config.body.id]);
  });

  it('lets exactly one of many concurrent activations win across two replicas', async () => {
    const ids: number[] = [];
    for (let n = 0; n < 8; n += 1)
      ids.push((await first.create(processorBody({ service: 3, name: `Candidate ${n}` }))).body.id);
    const answers = await Promise.all(
      ids.map((id, n) => (n % 2 === 0 ? first : second).patch(id, { active: true })),
    );
    const statuses = answers.map((answer) => answer.status).sort();
    expect(statuses).toEqual([200, 409, 409, 409, 409, 409, 409, 409]);
    const winner = ids[answers.findIndex((answer) => answer.status === 200)];
    expect(await activeOf(3, 'config')).toEqual([winner]);
  });

  it('lets exactly one of many concurrent creates of an active processor win across two replicas', async () => {
    const answers = await Promise.all(
      [0, 1, 2, 3, 4, 5].map((n) =>
        (n % 2 === 0 ? first : second).create(
          processorBody({ service: 4, name: `Racer ${n}`, active: true }),
        ),
      ),
    );
    expect(answers.map((answer) => answer.status).sort()).toEqual([201, 409, 409, 409, 409, 409]);
    expect(await activeOf(4, 'config')).toHaveLength(1);
  });

  it('takes over a slot that a crash left to a processor that never became active', async () => {
    const crashed = await first.create(processorBody({ service: 5, name: 'Crashed' }));
    const next = await first.create(processorBody({ service: 5, name: 'Next' }));
    const slots = first.collection(ACTIVE_SLOTS_COLLECTION);
    // What a replica that died between claiming and activating leaves behind, a minute ago...
    await slots.insertOne({
      _id: '5:config' as never,
      processor_id: crashed.body.id,
      since: new Date(Date.now() - 60_000),
    });
    expect((await first.patch(next.body.id, { active: true }, owner)).status).toBe(200);
    expect(await activeOf(5, 'config')).toEqual([next.body.id]);

    // ...whereas a fresh claim is an activation in progress: 409.
    await first.patch(next.body.id, { active: false });
    await slots.insertOne({ _id: '5:config' as never, processor_id: crashed.body.id, since: new Date() });
    const refused = await first.patch(next.body.id, { active: true });
    expect(refused.status).toBe(409);
    expect(refused.body.detail).toMatch(/being activated/);
  });
});
