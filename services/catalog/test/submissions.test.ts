import type { GeneralSettings } from '@pack/contracts';
import { admin, consumer, newUser, owner, startCatalog, type CatalogHarness, type Reply } from './harness';

describe('declaration submissions', () => {
  let catalog: CatalogHarness;
  let manual: { id: number };
  let automatic: { id: number };
  let baseline: GeneralSettings;

  const submit = (serviceId: number, declaration: unknown, who = consumer) =>
    catalog.as(who, 'POST', `/v1/catalog/services/${serviceId}/declarations/`, { declaration });
  const counts = async () => ({
    items: await catalog.collection('service_items').countDocuments(),
    declarations: await catalog.collection('declarations').countDocuments(),
    changeInstances: await catalog.collection('change_instances').countDocuments(),
  });

  beforeAll(async () => {
    catalog = await startCatalog();
    baseline = structuredClone(catalog.settings());
    manual = (await catalog.as(owner, 'POST', '/v1/catalog/services/', { name: 'Virtual machine' })).body;
    automatic = (
      await catalog.as(owner, 'POST', '/v1/catalog/services/', { name: 'DNS record', auto_approval: true })
    ).body;
  });
  afterAll(async () => {
    await catalog.stop();
  });
  // Every test leaves the settings as it found them.
  afterEach(() => {
    expect(catalog.settings()).toEqual(baseline);
  });

  it('creates the Service Item, the declaration and a PENDING change instance', async () => {
    const declaration = {
      cpu: 4,
      memory_gb: 16,
      $schema: 'https://example.test/vm.json',
      'disk.size': [[1, 2]],
    };
    const { status, body } = await submit(manual.id, declaration);
    expect(status).toBe(201);
    expect(body.declaration).toMatchObject({ service: manual.id, consumer: consumer.id, declaration });
    expect(body.service_item).toMatchObject({
      service: { id: manual.id, name: 'Virtual machine' },
      consumer: { id: consumer.id, name: consumer.username },
      latest_declaration_id: body.declaration.id,
      latest_approved_declaration_id: null,
    });
    expect(body.change_instance).toMatchObject({
      service: { id: manual.id, name: 'Virtual machine', owner: { id: owner.id, name: owner.username } },
      service_item: body.service_item.id,
      declaration_id: body.declaration.id,
      declaration,
      consumer: { id: consumer.id, name: consumer.username },
      state: 'PENDING',
      auto_approved: false,
      approved_at: null,
      history: [
        {
          from: null,
          to: 'PENDING',
          by: { kind: 'user', user_id: consumer.id, username: consumer.username },
          reasons: [],
        },
      ],
    });
    const read = await catalog.as(owner, 'GET', `/v1/catalog/change_instances/${body.change_instance.id}/`);
    expect(read.body.declaration).toEqual(declaration);
  });

  it("updates the consumer's existing Service Item on the next submission, with a new change instance", async () => {
    const buyer = newUser('consumer');
    const first = await submit(manual.id, { cpu: 4 }, buyer);
    const second = await submit(manual.id, { cpu: 8 }, buyer);
    expect(second.status).toBe(201);
    expect(second.body.service_item.id).toBe(first.body.service_item.id);
    expect(second.body.service_item.latest_declaration_id).toBe(second.body.declaration.id);
    expect(second.body.declaration.id).toBeGreaterThan(first.body.declaration.id);
    const items = await catalog.as(buyer, 'GET', '/v1/catalog/service_items/');
    expect(items.body.count).toBe(1);
    const instances = await catalog.as(buyer, 'GET', '/v1/catalog/change_instances/?state=ALL');
    expect(instances.body.results.map((ci: { id: number }) => ci.id).sort()).toEqual(
      [first.body.change_instance.id, second.body.change_instance.id].sort(),
    );
  });

  it('approves at once when the Service has auto_approval, and marks the declaration as latest approved', async () => {
    const { status, body } = await submit(automatic.id, { name: 'www', type: 'A' });
    expect(status).toBe(201);
    expect(body.change_instance).toMatchObject({
      state: 'APPROVED',
      auto_approved: true,
      approved_at: expect.any(String),
    });
    expect(
      body.change_instance.history.map((h: { to: string; by: { kind: string } }) => [h.to, h.by.kind]),
    ).toEqual([
      ['PENDING', 'user'],
      ['APPROVED', 'auto_approval'],
    ]);
    expect(body.service_item).toMatchObject({
      latest_declaration_id: body.declaration.id,
      latest_approved_declaration_id: body.declaration.id,
      latest_approved_change_instance_id: body.change_instance.id,
    });
    const latest = await catalog.as(
      admin,
      'GET',
      `/v1/catalog/service_items/${body.service_item.id}/latest_approved_declaration/`,
    );
    expect(latest.body).toMatchObject({
      service_item: body.service_item.id,
      service: automatic.id,
      change_instance: body.change_instance.id,
      declaration_id: body.declaration.id,
      declaration: { name: 'www', type: 'A' },
    });
  });

  it.each([
    ['an array', [1, 2]],
    ['a string', 'cpu=4'],
    ['null', null],
    ['a number', 42],
  ])('refuses a declaration that is %s with 400 and stores nothing', async (_what, declaration) => {
    const before = await counts();
    const { status, body } = await submit(manual.id, declaration);
    expect(status).toBe(400);
    expect(body.errors).toEqual({ declaration: ['must be a JSON object'] });
    expect(await counts()).toEqual(before);
  });

  it('refuses a body without a declaration, or with other fields, with 400 and stores nothing', async () => {
    const before = await counts();
    expect(
      (await catalog.as(consumer, 'POST', `/v1/catalog/services/${manual.id}/declarations/`, {})).status,
    ).toBe(400);
    const extra = await catalog.as(consumer, 'POST', `/v1/catalog/services/${manual.id}/declarations/`, {
      declaration: {},
      state: 'APPROVED',
    });
    expect(extra.status).toBe(400);
    expect(extra.body.errors).toEqual({ state: ['unknown field'] });
    expect(await counts()).toEqual(before);
  });

  it('answers 404 for an unknown Service and stores nothing', async () => {
    const before = await counts();
    const { status, body } = await submit(999_999, { cpu: 1 });
    expect(status).toBe(404);
    expect(body.detail).toContain('999999');
    expect(await counts()).toEqual(before);
  });

  it('lets only consumers submit (403 for owners and admins), and refuses unsigned callers (401)', async () => {
    const before = await counts();
    for (const who of [owner, admin]) expect((await submit(manual.id, { cpu: 1 }, who)).status).toBe(403);
    expect(
      (await catalog.as(null, 'POST', `/v1/catalog/services/${manual.id}/declarations/`, { declaration: {} }))
        .status,
    ).toBe(401);
    expect(await counts()).toEqual(before);
  });

  it('shows consumers only their own items and change instances, and owners only those of their Services', async () => {
    const [seller, otherSeller] = [newUser('service_owner'), newUser('service_owner')];
    const [buyer, otherBuyer] = [newUser('consumer'), newUser('consumer')];
    const service = (await catalog.as(seller, 'POST', '/v1/catalog/services/', { name: `S ${seller.id}` }))
      .body;
    const otherService = (
      await catalog.as(otherSeller, 'POST', '/v1/catalog/services/', { name: `S ${otherSeller.id}` })
    ).body;
    const mine = await submit(service.id, { n: 1 }, buyer);
    const mineToo = await submit(otherService.id, { n: 2 }, buyer);
    const theirs = await submit(service.id, { bucket: 'b1' }, otherBuyer);
    expect(theirs.status).toBe(201);
    const otherItem = theirs.body.service_item.id as number;
    const otherInstance = theirs.body.change_instance.id as number;
    const ids = (reply: Reply) => reply.body.results.map((r: { id: number }) => r.id).sort();

    const buyers = await catalog.as(buyer, 'GET', '/v1/catalog/change_instances/?state=ALL');
    expect(ids(buyers)).toEqual([mine.body.change_instance.id, mineToo.body.change_instance.id].sort());
    expect((await catalog.as(buyer, 'GET', `/v1/catalog/change_instances/${otherInstance}/`)).status).toBe(
      404,
    );
    expect((await catalog.as(buyer, 'GET', `/v1/catalog/service_items/${otherItem}/`)).status).toBe(404);
    expect(
      (await catalog.as(buyer, 'GET', `/v1/catalog/service_items/${otherItem}/latest_approved_declaration/`))
        .status,
    ).toBe(404);

    const sellers = await catalog.as(seller, 'GET', '/v1/catalog/change_instances/?state=ALL');
    expect(ids(sellers)).toEqual([mine.body.change_instance.id, otherInstance].sort());
    expect(
      (await catalog.as(otherSeller, 'GET', `/v1/catalog/change_instances/${otherInstance}/`)).status,
    ).toBe(404);
    expect(ids(await catalog.as(seller, 'GET', '/v1/catalog/service_items/'))).toEqual(
      [mine.body.service_item.id, otherItem].sort(),
    );
    expect(ids(await catalog.as(otherSeller, 'GET', '/v1/catalog/service_items/'))).toEqual([
      mineToo.body.service_item.id,
    ]);

    const everything = await catalog.as(admin, 'GET', '/v1/catalog/change_instances/?state=ALL&limit=500');
    expect(ids(everything)).toEqual(
      expect.arrayContaining([mine.body.change_instance.id, mineToo.body.change_instance.id, otherInstance]),
    );
  });

  it('lists change instances by ?state= and pages them', async () => {
    const seller = newUser('service_owner');
    const service = (await catalog.as(seller, 'POST', '/v1/catalog/services/', { name: `S ${seller.id}` }))
      .body;
    const submitted = [];
    for (const n of [1, 2, 3])
      submitted.push((await submit(service.id, { n })).body.change_instance.id as number);
    const approve = await catalog.as(seller, 'PATCH', `/v1/catalog/change_instances/${submitted[0]}/`, {
      state: 'APPROVED',
    });
    expect(approve.status).toBe(200);

    const approved = await catalog.as(seller, 'GET', '/v1/catalog/change_instances/?state=APPROVED');
    expect(approved.body.results.map((ci: { id: number; state: string }) => [ci.id, ci.state])).toEqual([
      [submitted[0], 'APPROVED'],
    ]);
    const both = await catalog.as(
      seller,
      'GET',
      '/v1/catalog/change_instances/?state=PENDING,APPROVED&limit=2',
    );
    expect(both.body.count).toBe(3);
    expect(both.body.results).toHaveLength(2);
    // The next link carries the key of the page's last item.
    expect(both.body.next).toContain(`after=${both.body.results[1].id}`);
    const bad = await catalog.as(seller, 'GET', '/v1/catalog/change_instances/?state=DONE');
    expect(bad.status).toBe(400);
    expect(bad.body.errors['query.state'][0]).toContain('DONE');
    // The document lists the states; a filter naming none (`?state=`, `?state=,`) is refused, not read as "all".
    for (const empty of ['', ',', '%20'])
      expect(
        (await catalog.as(seller, 'GET', `/v1/catalog/change_instances/?state=${empty}`)).body.errors,
      ).toEqual({
        'query.state': [
          'must name at least one state: PENDING, APPROVED, REJECTED, IN_PROGRESS, COMPLETED, FAILED, CANCELLED or ALL',
        ],
      });
  });

  it('applies the GUI Table Settings default state filter of the caller role when ?state= is absent', async () => {
    const seller = newUser('service_owner');
    const buyer = newUser('consumer');
    const service = (await catalog.as(seller, 'POST', '/v1/catalog/services/', { name: `S ${seller.id}` }))
      .body;
    const submitted = [];
    for (const n of [1, 2, 3])
      submitted.push((await submit(service.id, { n }, buyer)).body.change_instance.id as number);
    await catalog.as(seller, 'PATCH', `/v1/catalog/change_instances/${submitted[2]}/`, { state: 'APPROVED' });
    const states = (reply: Reply) => reply.body.results.map((ci: { state: string }) => ci.state).sort();

    // Defaults: owners see PENDING, consumers everything.
    const ownerDefault = await catalog.as(seller, 'GET', '/v1/catalog/change_instances/');
    expect(states(ownerDefault)).toEqual(['PENDING', 'PENDING']);
    expect(ownerDefault.headers.get('x-state-filter')).toBe('PENDING');
    expect((await catalog.as(buyer, 'GET', '/v1/catalog/change_instances/')).body.count).toBe(3);

    let previous!: GeneralSettings['gui_table'];
    await catalog.changeSettings((s) => {
      previous = structuredClone(s.gui_table);
      s.gui_table.default_filter_states_for_consumers = ['APPROVED'];
      s.gui_table.default_filter_states_for_serviceowners = [];
    });
    try {
      expect(states(await catalog.as(buyer, 'GET', '/v1/catalog/change_instances/'))).toEqual(['APPROVED']);
      expect((await catalog.as(seller, 'GET', '/v1/catalog/change_instances/')).body.count).toBe(3);
      expect((await catalog.as(buyer, 'GET', '/v1/catalog/change_instances/?state=PENDING')).body.count).toBe(
        2,
      );
    } finally {
      await catalog.changeSettings((s) => {
        s.gui_table = previous;
      });
    }
  });

  it('refuses submissions with 403 while the Submission Builder switch is off, and stores nothing', async () => {
    await catalog.changeSettings((s) => {
      s.submission_builder.enable_submit_functionality = false;
    });
    try {
      const before = await counts();
      const { status, body } = await submit(manual.id, { cpu: 2 });
      expect(status).toBe(403);
      expect(body.detail).toContain('switched off');
      expect(await counts()).toEqual(before);
    } finally {
      await catalog.changeSettings((s) => {
        s.submission_builder.enable_submit_functionality = true;
      });
    }
    expect((await submit(manual.id, { cpu: 2 })).status).toBe(201);
  });
});
