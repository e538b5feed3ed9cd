import type { mongo } from 'mongoose';
import { consumer, newUser, owner, startCatalog, type CatalogHarness } from './harness';

const TRANSITIONS = 'change_instance_transitions';

/**
 * The Service Item list read every submission and approval record of its
 * page's items (on our FerretDB, every record of the collection, unmarshalled in Go): in the
 * 30-minute soak it went from 9 ms to 20-30 s. Its pointers are now kept on the item
 * (decision 0005, amendment), so a read costs the same whatever the items' history.
 */
describe('what reading Service Items costs the database', () => {
  let catalog: CatalogHarness;
  const sent: { name: string; collection: unknown; text: string }[] = [];
  const record = (event: mongo.CommandStartedEvent) => {
    const command = event.command as Record<string, unknown>;
    const text = JSON.stringify(command);
    sent.push({ name: event.commandName, collection: command[event.commandName], text });
  };

  beforeAll(async () => {
    catalog = await startCatalog();
  });
  afterAll(async () => {
    await catalog.stop();
  });

  it('the list and a single item are read without a find of change_instance_transitions, showing the latest submission and the most recent approval', async () => {
    const service = (await catalog.as(owner, 'POST', '/v1/catalog/services/', { name: 'Pointers list' }))
      .body;
    const submit = (declaration: unknown, who = consumer) => catalog.submit(service.id, declaration, who);
    const approve = async (id: number) =>
      expect(
        (await catalog.as(owner, 'PATCH', `/v1/catalog/change_instances/${id}/`, { state: 'APPROVED' }))
          .status,
      ).toBe(200);
    const buyer = newUser('consumer');
    const first = await submit({ n: 1 }, buyer);
    const second = await submit({ n: 2 }, buyer);
    await submit({ n: 1 });
    await approve(second.change_instance.id);
    await approve(first.change_instance.id); // the most recent approval wins (0005)

    const client = catalog.service.context.mongo.connection.getClient();
    sent.length = 0;
    client.on('commandStarted', record);
    let list, one;
    try {
      list = await catalog.as(owner, 'GET', `/v1/catalog/service_items/?service=${service.id}`);
      one = await catalog.as(owner, 'GET', `/v1/catalog/service_items/${first.service_item.id}/`);
    } finally {
      client.off('commandStarted', record);
    }
    expect([list.status, one.status]).toEqual([200, 200]);
    expect(list.body.count).toBe(2);
    const listed = (list.body.results as { id: number }[]).find((item) => item.id === first.service_item.id);
    for (const view of [listed, one.body])
      expect(view).toMatchObject({
        latest_declaration_id: second.declaration.id,
        latest_approved_declaration_id: first.declaration.id,
        latest_approved_change_instance_id: first.change_instance.id,
      });
    // The outbox relay (finds by `_outbox_pending`, updates whose events name the item) and the
    // view's roll-forward (by change instance) may run meanwhile; a history read names the items.
    const historyReads = sent.filter(
      (command) =>
        command.collection === TRANSITIONS &&
        command.name !== 'update' &&
        command.text.includes('service_item_id'),
    );
    expect(historyReads).toEqual([]);
    const reads = sent.filter((command) => command.collection !== TRANSITIONS);
    process.stdout.write(
      `list + item read: ${reads.map((c) => `${c.name} ${String(c.collection)}`).join(', ')}\n`,
    );
  });
});
