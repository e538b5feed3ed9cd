import { EventTap, outboxDrained } from '@pack/testkit';
import { consumer, otherConsumer, owner, startCatalog, type CatalogHarness } from './harness';

describe('a consumer cancelling their own change instance (decision 0005)', () => {
  let catalog: CatalogHarness;
  let tap: EventTap;
  let service: { id: number };

  const submit = async (who = consumer) => {
    const reply = await catalog.as(who, 'POST', `/v1/catalog/services/${service.id}/declarations/`, {
      declaration: { size: 'S' },
    });
    expect(reply.status).toBe(201);
    return reply.body.change_instance.id as number;
  };
  const move = (who: typeof consumer, id: number, state: string) =>
    catalog.as(who, 'PATCH', `/v1/catalog/change_instances/${id}/`, { state });
  const stateOf = async (id: number) =>
    (await catalog.as(owner, 'GET', `/v1/catalog/change_instances/${id}/`)).body.state as string;

  beforeAll(async () => {
    catalog = await startCatalog();
    tap = await EventTap.start(process.env.AMQP_URL!, catalog.namespace, ['catalog.#']);
    service = (await catalog.as(owner, 'POST', '/v1/catalog/services/', { name: 'Cancellable' })).body;
  });
  afterAll(async () => {
    await tap.stop();
    await catalog.stop();
  });

  it('cancels their own PENDING instance, recorded as theirs, with its event', async () => {
    const id = await submit();
    const reply = await move(consumer, id, 'CANCELLED');
    expect(reply.status).toBe(200);
    expect(reply.body.state).toBe('CANCELLED');
    expect(reply.body.history.at(-1)).toMatchObject({
      from: 'PENDING',
      to: 'CANCELLED',
      by: { kind: 'user', user_id: consumer.id, username: consumer.username },
    });
    expect(await stateOf(id)).toBe('CANCELLED');
    const listed = await catalog.as(consumer, 'GET', '/v1/catalog/change_instances/?state=CANCELLED');
    expect(listed.body.results.map((ci: { id: number }) => ci.id)).toContain(id);
    await outboxDrained(catalog.service);
    const events = (await tap.drain()).filter((e) => e.data.change_instance_id === id);
    expect(events.map((e) => `${e.data.old_state ?? ''}>${e.data.state}`).sort()).toEqual([
      '>PENDING',
      'PENDING>CANCELLED',
    ]);
    // Cancelling again is a repeat: 200, nothing more recorded.
    const again = await move(consumer, id, 'CANCELLED');
    expect(again.status).toBe(200);
    expect(again.body.history).toHaveLength(2);
  });

  it("answers 404 for another consumer's instance and leaves it PENDING", async () => {
    const id = await submit(otherConsumer);
    const reply = await move(consumer, id, 'CANCELLED');
    expect(reply.status).toBe(404);
    expect(await stateOf(id)).toBe('PENDING');
  });

  it('refuses (409) once the instance has left PENDING, naming its state', async () => {
    const id = await submit();
    expect((await move(owner, id, 'APPROVED')).status).toBe(200);
    const reply = await move(consumer, id, 'CANCELLED');
    expect(reply.status).toBe(409);
    expect(reply.body.detail).toContain('only while it is PENDING; this one is APPROVED');
    expect(await stateOf(id)).toBe('APPROVED');
  });

  it('refuses (403) any other move by the consumer, even to the state it is in', async () => {
    const id = await submit();
    for (const state of ['APPROVED', 'REJECTED', 'PENDING']) {
      const reply = await move(consumer, id, state);
      expect(reply.status).toBe(403);
      expect(reply.body.detail).toContain('can only cancel');
    }
    expect(await stateOf(id)).toBe('PENDING');
  });
});
