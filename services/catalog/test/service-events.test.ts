import { EventTap, outboxDrained, TcpProxy, waitFor, type TappedEvent } from '@pack/testkit';
import { admin, owner, otherOwner, startCatalog, type CatalogHarness } from './harness';

const CHANGED = 'catalog.service.changed.v1';
const SERVICES = '/v1/catalog/services/';

/**
 * The snapshots published for one Service, in version order, each event once: delivery is at
 * least once (a deletion copies unpublished events to the standalone outbox, so the relay may
 * send one twice, with the same event id).
 */
function snapshotsOf(events: TappedEvent[], serviceId: number) {
  const unique = new Map(
    events
      .filter((event) => event.type === CHANGED && event.data.service_id === serviceId)
      .map((event) => [event.id, event.data]),
  );
  return [...unique.values()].sort((a, b) => a.version - b.version);
}

describe('Service events (catalog.service.changed.v1)', () => {
  let catalog: CatalogHarness;
  let tap: EventTap;

  beforeAll(async () => {
    catalog = await startCatalog();
    tap = await EventTap.start(process.env.AMQP_URL!, catalog.namespace, ['catalog.service.#']);
  });
  afterAll(async () => {
    await tap.stop();
    await catalog.stop();
  });

  it('publishes a versioned snapshot on create, update and delete, the last one a tombstone', async () => {
    const created = await catalog.as(owner, 'POST', SERVICES, { name: 'Object storage' });
    expect(created.status).toBe(201);
    const id = created.body.id as number;
    const renamed = await catalog.as(owner, 'PATCH', `${SERVICES}${id}/`, { name: 'Object storage v2' });
    expect(renamed.status).toBe(200);
    const moved = await catalog.as(admin, 'PATCH', `${SERVICES}${id}/`, {
      owner: { id: otherOwner.id, name: otherOwner.username },
    });
    expect(moved.status).toBe(200);
    expect((await catalog.as(admin, 'DELETE', `${SERVICES}${id}/`)).status).toBe(204);

    await outboxDrained(catalog.service);
    const snapshots = snapshotsOf(await tap.drain(), id);
    expect(snapshots).toEqual([
      {
        service_id: id,
        name: 'Object storage',
        owner: { id: owner.id, name: owner.username },
        deleted: false,
        version: 1,
      },
      {
        service_id: id,
        name: 'Object storage v2',
        owner: { id: owner.id, name: owner.username },
        deleted: false,
        version: 2,
      },
      {
        service_id: id,
        name: 'Object storage v2',
        owner: { id: otherOwner.id, name: otherOwner.username },
        deleted: false,
        version: 3,
      },
      {
        service_id: id,
        name: 'Object storage v2',
        owner: { id: otherOwner.id, name: otherOwner.username },
        deleted: true,
        version: 4,
      },
    ]);
  });

  it('gives concurrent edits distinct versions, the newest carrying what the Service ends up as', async () => {
    const created = await catalog.as(owner, 'POST', SERVICES, { name: 'Message queue' });
    const id = created.body.id as number;
    const edits = await Promise.all(
      ['one', 'two', 'three'].map((word) =>
        catalog.as(owner, 'PATCH', `${SERVICES}${id}/`, { description: word }),
      ),
    );
    expect(edits.map((edit) => edit.status)).toEqual([200, 200, 200]);
    const final = await catalog.as(owner, 'GET', `${SERVICES}${id}/`);

    await outboxDrained(catalog.service);
    const snapshots = snapshotsOf(await tap.drain(), id);
    expect(snapshots.map((snapshot) => snapshot.version)).toEqual([1, 2, 3, 4]);
    const stored = await catalog.collection('services').findOne({ _id: id as never });
    expect(stored).toMatchObject({ version: 4, description: final.body.description });
  });

  it('publishes nothing when a change is refused', async () => {
    const first = await catalog.as(owner, 'POST', SERVICES, { name: 'Cache' });
    await catalog.as(owner, 'POST', SERVICES, { name: 'Queue' });
    await outboxDrained(catalog.service);
    await tap.drain();
    const before = (await tap.drain()).length;

    const taken = await catalog.as(owner, 'PATCH', `${SERVICES}${first.body.id}/`, { name: 'Queue' });
    expect(taken.status).toBe(409);
    const notYours = await catalog.as(otherOwner, 'DELETE', `${SERVICES}${first.body.id}/`);
    expect(notYours.status).toBe(404);

    await outboxDrained(catalog.service);
    expect((await tap.drain()).length).toBe(before);
  });
});

describe('Service events while RabbitMQ is down', () => {
  let proxy: TcpProxy;
  let catalog: CatalogHarness;
  let tap: EventTap;

  beforeAll(async () => {
    const amqpUrl = process.env.AMQP_URL!;
    proxy = await TcpProxy.forUrl(amqpUrl).start();
    catalog = await startCatalog({ env: { AMQP_URL: proxy.rewrite(amqpUrl) } });
    tap = await EventTap.start(amqpUrl, catalog.namespace, ['catalog.service.#']);
  });
  afterAll(async () => {
    proxy.restore();
    await tap.stop();
    await catalog.stop();
    await proxy.stop();
  });

  it('publishes every version, even of a Service deleted before its events went out', async () => {
    proxy.cut();
    await waitFor(() => !catalog.service.context.broker.isReady(), { what: 'broker gone' });
    const id = (await catalog.as(owner, 'POST', SERVICES, { name: 'Short-lived' })).body.id as number;
    expect((await catalog.as(owner, 'PATCH', `${SERVICES}${id}/`, { description: 'soon gone' })).status).toBe(
      200,
    );
    expect((await catalog.as(owner, 'DELETE', `${SERVICES}${id}/`)).status).toBe(204);
    expect(await tap.drain()).toEqual([]);

    proxy.restore();
    await outboxDrained(catalog.service);
    const versions = snapshotsOf(await tap.drain(), id).map((s) => `v${s.version} deleted=${s.deleted}`);
    expect(versions).toEqual(['v1 deleted=false', 'v2 deleted=false', 'v3 deleted=true']);
  });
});
