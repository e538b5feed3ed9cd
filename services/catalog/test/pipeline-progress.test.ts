import { waitFor } from '@pack/testkit';
import { consumer, events, owner, startCatalog, type CatalogHarness } from './harness';

/** A pipeline's progress moving Change Instances (docs/decisions/0026), through the catalog's consumer. */
describe('pipeline progress on change instances', () => {
  let catalog: CatalogHarness;
  let service: { id: number };

  const approvedInstance = async (approve = true): Promise<number> => {
    const submitted = await catalog.as(consumer, 'POST', `/v1/catalog/services/${service.id}/declarations/`, {
      declaration: { size: 'M' },
    });
    expect(submitted.status).toBe(201);
    const id = submitted.body.change_instance.id as number;
    if (approve)
      expect(
        (await catalog.as(owner, 'PATCH', `/v1/catalog/change_instances/${id}/`, { state: 'APPROVED' }))
          .status,
      ).toBe(200);
    return id;
  };
  const progress = (
    id: number,
    state: 'IN_PROGRESS' | 'COMPLETED' | 'FAILED',
    version: number,
    reasons: string[] = [],
  ) =>
    catalog.publish(events.pipelineProgress, {
      change_instance_id: id,
      service_item_id: 1,
      pipeline_id: 1,
      run: Math.floor(version / 100_000),
      state,
      reasons,
      version,
    });
  const read = async (id: number) =>
    (await catalog.as(owner, 'GET', `/v1/catalog/change_instances/${id}/`)).body;
  const reaches = (id: number, state: string, steps: number) =>
    waitFor(
      async () => {
        const body = await read(id);
        return body.state === state && body.history.length === steps && body;
      },
      { what: `change instance ${id} ${state} after ${steps} steps` },
    );

  beforeAll(async () => {
    catalog = await startCatalog();
    service = (await catalog.as(owner, 'POST', '/v1/catalog/services/', { name: 'Pipelined' })).body;
  });
  afterAll(async () => {
    await catalog.stop();
  });

  it('follows runs, failures and retriggers; repeated and late events never move it back', async () => {
    const id = await approvedInstance();
    await progress(id, 'IN_PROGRESS', 100_002);
    await reaches(id, 'IN_PROGRESS', 3);
    await progress(id, 'FAILED', 100_003, ['CONFIG: timeout: provider took too long']);
    const failed = await reaches(id, 'FAILED', 4);
    expect(failed.reasons).toEqual(['CONFIG: timeout: provider took too long']);
    expect(failed.history.at(-1)).toMatchObject({
      from: 'IN_PROGRESS',
      to: 'FAILED',
      by: { kind: 'pipeline' },
    });
    await progress(id, 'IN_PROGRESS', 200_002); // the retrigger's run 2

    // A repeat, and a late failure of run 1, then run 2's later moves: neither old one counts.
    await progress(id, 'FAILED', 100_003, ['repeat']);
    await progress(id, 'FAILED', 100_005, ['late']);
    await progress(id, 'IN_PROGRESS', 200_004);
    await progress(id, 'COMPLETED', 200_007);
    const done = await reaches(id, 'COMPLETED', 6);
    expect(done.history.map((step: { to: string }) => step.to)).toEqual([
      'PENDING',
      'APPROVED',
      'IN_PROGRESS',
      'FAILED',
      'IN_PROGRESS',
      'COMPLETED',
    ]);
    expect(done.reasons).toEqual([]);
  });

  it('passes through IN_PROGRESS when only the end arrives, and leaves undecided instances alone', async () => {
    const pending = await approvedInstance(false);
    const id = await approvedInstance();
    await progress(pending, 'IN_PROGRESS', 100_002);
    await progress(id, 'COMPLETED', 100_007);
    const done = await reaches(id, 'COMPLETED', 4);
    expect(done.history.slice(2)).toMatchObject([
      { from: 'APPROVED', to: 'IN_PROGRESS', by: { kind: 'pipeline' } },
      { from: 'IN_PROGRESS', to: 'COMPLETED', by: { kind: 'pipeline' } },
    ]);
    // One at a time in order: the PENDING instance's event was handled before, and changed nothing.
    expect(await read(pending)).toMatchObject({ state: 'PENDING', history: [{ to: 'PENDING' }] });
    // A final instance stays final (handled before the next instance's event, which we wait for).
    const marker = await approvedInstance();
    await progress(id, 'FAILED', 200_003);
    await progress(marker, 'IN_PROGRESS', 100_002);
    await reaches(marker, 'IN_PROGRESS', 3);
    expect(await read(id)).toMatchObject({ state: 'COMPLETED', history: done.history });
  });
});
