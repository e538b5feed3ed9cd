import { call, outboxDrained } from '@pack/testkit';
import { admin, consumer, owner, startCatalog, type CatalogHarness } from './harness';

describe('catalog bad input that must not break anything', () => {
  let catalog: CatalogHarness;
  beforeAll(async () => {
    catalog = await startCatalog();
  });
  afterAll(async () => {
    await catalog.stop();
  });

  const stored = async () => ({
    // The outbox fields change as the relay publishes; the Services themselves must not.
    services: await catalog
      .collection('services')
      .find({}, { projection: { _outbox: 0, _outbox_pending: 0 } })
      .sort({ _id: 1 })
      .toArray(),
    items: await catalog.collection('service_items').countDocuments(),
    declarations: await catalog.collection('declarations').countDocuments(),
    changeInstances: await catalog.collection('change_instances').countDocuments(),
    transitions: await catalog.collection('change_instance_transitions').countDocuments(),
  });

  const itemsListed = async () =>
    (await catalog.as(consumer, 'GET', '/v1/catalog/service_items/')).body.count as number;

  it('answers 409 problem+json for a rename to the name of another Service, and changes nothing', async () => {
    const first = (await catalog.as(owner, 'POST', '/v1/catalog/services/', { name: 'Alpha' })).body;
    await catalog.as(admin, 'POST', '/v1/catalog/services/', { name: 'Beta' });
    // Services carry their own events until the relay has published them.
    await outboxDrained(catalog.service);
    const before = await stored();
    for (const who of [owner, admin]) {
      const renamed = await catalog.as(who, 'PATCH', `/v1/catalog/services/${first.id}/`, {
        name: 'Beta',
        description: 'renamed',
      });
      expect(renamed.status).toBe(409);
      expect(renamed.headers.get('content-type')).toContain('application/problem+json');
      expect(renamed.body.detail).toContain('"Beta"');
    }
    expect(await stored()).toEqual(before);
    const read = await catalog.as(owner, 'GET', `/v1/catalog/services/${first.id}/`);
    expect(read.body).toMatchObject({ name: 'Alpha', description: '' });
  });

  it('stores nothing, not even an empty Service Item, for a declaration too deeply nested to store', async () => {
    const service = (await catalog.as(owner, 'POST', '/v1/catalog/services/', { name: 'Deep' })).body;
    // 5000 levels, 30 KB: once a 500 (stack overflow) that left an empty Service Item behind.
    const deep = `${'{"a":'.repeat(5000)}{"leaf":true}${'}'.repeat(5000)}`;
    const path = `/v1/catalog/services/${service.id}/declarations/`;
    await outboxDrained(catalog.service);
    const before = await stored();
    const listed = await itemsListed();
    const reply = await call(catalog.url, 'POST', path, {
      principal: consumer,
      raw: `{"declaration":${deep}}`,
    });
    expect(reply.status).toBe(400);
    expect(reply.headers.get('content-type')).toContain('application/problem+json');
    expect(Object.keys(reply.body.errors)).toEqual(['declaration']);
    expect(await stored()).toEqual(before);
    expect(await itemsListed()).toBe(listed);
  });

  it('removes the Service Item it created when the submission cannot be recorded', async () => {
    const service = (await catalog.as(owner, 'POST', '/v1/catalog/services/', { name: 'Jammed' })).body;
    // The next change instance number is taken already (as after a lost counter update), so the
    // submission fails at its commit point, after the item would have been created.
    const counter = await catalog.collection('counters').findOne({ _id: 'change_instances' as never });
    const next = ((counter?.seq as number | undefined) ?? 0) + 1;
    await catalog
      .collection('claims')
      .insertOne({ _id: `change_instances:${next}` as never, at: new Date() });
    await catalog.collection('change_instance_transitions').insertOne({ _id: `${next + 1}:1` as never });
    const before = await stored();
    const listed = await itemsListed();
    const reply = await catalog.as(consumer, 'POST', `/v1/catalog/services/${service.id}/declarations/`, {
      declaration: { size: 'M' },
    });
    expect(reply.status).toBe(500);
    const after = await stored();
    expect(after.items).toBe(before.items);
    expect(after.changeInstances).toBe(before.changeInstances);
    expect(await itemsListed()).toBe(listed);

    // The consumer's next submission goes through and creates the item then.
    const retried = await catalog.as(consumer, 'POST', `/v1/catalog/services/${service.id}/declarations/`, {
      declaration: { size: 'M' },
    });
    expect(retried.status).toBe(201);
    expect(await itemsListed()).toBe(listed + 1);
  });
});
