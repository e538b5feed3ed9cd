import { admin, consumer, otherOwner, owner, startCatalog, type CatalogHarness } from './harness';

/** default_allow_submit_submission_builder and a Service's own allow_submit_submission_builder (decision 0008). */
describe('whether a Service takes submissions from the submission builder', () => {
  let catalog: CatalogHarness;
  beforeAll(async () => {
    catalog = await startCatalog();
  });
  afterAll(async () => {
    await catalog.stop();
  });

  const create = async (name: string, extra: Record<string, unknown> = {}) => {
    const reply = await catalog.as(owner, 'POST', '/v1/catalog/services/', { name, ...extra });
    expect(reply.status).toBe(201);
    return reply.body as { id: number; allow_submit_submission_builder: boolean | null };
  };
  const submit = (serviceId: number) =>
    catalog.as(consumer, 'POST', `/v1/catalog/services/${serviceId}/declarations/`, {
      declaration: { n: 1 },
    });
  const stored = async () => ({
    items: await catalog.collection('service_items').countDocuments(),
    declarations: await catalog.collection('declarations').countDocuments(),
    transitions: await catalog.collection('change_instance_transitions').countDocuments(),
  });
  const setDefault = (allow: boolean) =>
    catalog.changeSettings((s) => {
      s.submission_builder.default_allow_submit_submission_builder = allow;
    });

  // Every test starts from the shipped default (on), whatever an earlier one left.
  beforeEach(() => setDefault(true));

  it('follows the default, read live, for a Service that sets nothing', async () => {
    const unset = await create('Follows the default');
    expect(unset.allow_submit_submission_builder).toBeNull();
    expect((await submit(unset.id)).status).toBe(201);

    await setDefault(false);
    const before = await stored();
    const refused = await submit(unset.id);
    expect(refused.status).toBe(403);
    expect(refused.body.detail).toContain('default_allow_submit_submission_builder');
    expect(await stored()).toEqual(before);

    await setDefault(true);
    expect((await submit(unset.id)).status).toBe(201);
  });

  it("lets a Service's own setting override the default either way", async () => {
    const open = await create('Always open', { allow_submit_submission_builder: true });
    const closed = await create('Always closed', { allow_submit_submission_builder: false });
    expect(open.allow_submit_submission_builder).toBe(true);
    const before = await stored();
    const refused = await submit(closed.id);
    expect(refused.status).toBe(403);
    expect(refused.body.detail).toContain('its owner switched them off');
    expect(await stored()).toEqual(before);

    await setDefault(false);
    expect((await submit(open.id)).status).toBe(201);
  });

  it('is changed by the owner or an admin with PATCH, and null returns a Service to the default', async () => {
    const service = await create('Switchable');
    const path = `/v1/catalog/services/${service.id}/`;
    const off = await catalog.as(owner, 'PATCH', path, { allow_submit_submission_builder: false });
    expect(off.body.allow_submit_submission_builder).toBe(false);
    expect((await submit(service.id)).status).toBe(403);
    const back = await catalog.as(admin, 'PATCH', path, { allow_submit_submission_builder: null });
    expect(back.body.allow_submit_submission_builder).toBeNull();
    expect((await submit(service.id)).status).toBe(201);

    expect(
      (await catalog.as(otherOwner, 'PATCH', path, { allow_submit_submission_builder: false })).status,
    ).toBe(404);
    const bad = await catalog.as(owner, 'PATCH', path, { allow_submit_submission_builder: 'no' });
    expect(bad.status).toBe(400);
    expect(Object.keys(bad.body.errors)).toEqual(['allow_submit_submission_builder']);
    expect((await catalog.as(consumer, 'GET', path)).body.allow_submit_submission_builder).toBeNull();
  });
});
