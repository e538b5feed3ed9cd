import { EventTap, outboxDrained } from '@pack/testkit';
import { admin, newUser, startCatalog, type CatalogUnderTest } from './helpers';

const SERVICE_CHANGED = 'catalog.service.changed.v1';

describe('service.changed events (the projection other services scope by owner with)', () => {
  let catalog: CatalogUnderTest;
  let tap: EventTap;

  beforeAll(async () => {
    catalog = await startCatalog();
    tap = await EventTap.start(process.env.AMQP_URL!, catalog.namespace, ['catalog.service.#']);
  });
  afterAll(async () => {
    await tap.stop();
    await catalog.stop();
  });

  it('publishes the Service with its owner at creation, on a change of owner and at deletion', async () => {
    const owner = newUser('service_owner');
    const created = (
      await catalog.as(owner, 'POST', '/v1/catalog/services/', { name: 'Events of a service' })
    ).body;
    const renamed = await catalog.as(admin, 'PATCH', `/v1/catalog/services/${created.id}/`, {
      name: 'Renamed service',
      owner: { id: 4242, name: 'new-owner' },
    });
    expect(renamed.status).toBe(200);
    expect((await catalog.as(admin, 'DELETE', `/v1/catalog/services/${created.id}/`)).status).toBe(204);
    await outboxDrained(catalog.service);

    // At least once: the deletion may publish again an event the relay was publishing.
    const seen = new Set<string>();
    const events = (await tap.drain()).filter(
      (event) => event.data.service.id === created.id && !seen.has(event.id) && seen.add(event.id),
    );
    expect(events.map((event) => event.type)).toEqual([SERVICE_CHANGED, SERVICE_CHANGED, SERVICE_CHANGED]);
    const byVersion = [...events].sort((a, b) => a.data.version - b.data.version);
    expect(byVersion.map((event) => [event.data.service, event.data.deleted])).toEqual([
      [{ id: created.id, name: 'Events of a service', owner: { id: owner.id, name: owner.username } }, false],
      [{ id: created.id, name: 'Renamed service', owner: { id: 4242, name: 'new-owner' } }, false],
      [{ id: created.id, name: 'Renamed service', owner: { id: 4242, name: 'new-owner' } }, true],
    ]);
  });

  it('publishes nothing for a rejected change', async () => {
    const owner = newUser('service_owner');
    const created = (await catalog.as(owner, 'POST', '/v1/catalog/services/', { name: 'Only once' })).body;
    const intruder = newUser('service_owner');
    expect(
      (await catalog.as(intruder, 'PATCH', `/v1/catalog/services/${created.id}/`, { name: 'x' })).status,
    ).toBe(404);
    await outboxDrained(catalog.service);
    const events = (await tap.drain()).filter((event) => event.data.service.id === created.id);
    expect(events).toHaveLength(1);
  });
});
