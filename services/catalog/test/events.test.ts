import { EventTap, outboxDrained, TcpProxy, waitFor, type TappedEvent } from '@pack/testkit';
import { consumer, owner, startCatalog, type CatalogHarness } from './harness';

const CREATED = 'catalog.change_instance.created.v1';
const STATE_CHANGED = 'catalog.change_instance.state_changed.v1';

/** One line per event of a change instance, e.g. "created PENDING" or "APPROVED -> IN_PROGRESS". */
function changesOf(events: TappedEvent[], changeInstanceId: number): string[] {
  return events
    .filter((event) => event.data.change_instance_id === changeInstanceId)
    .map((event) =>
      event.type === CREATED
        ? `created ${event.data.state}`
        : `${event.data.old_state} -> ${event.data.state}`,
    )
    .sort();
}

describe('change instance events', () => {
  let catalog: CatalogHarness;
  let tap: EventTap;
  let service: { id: number; name: string };

  beforeAll(async () => {
    catalog = await startCatalog();
    tap = await EventTap.start(process.env.AMQP_URL!, catalog.namespace, ['catalog.#']);
    service = (await catalog.as(owner, 'POST', '/v1/catalog/services/', { name: 'Kubernetes namespace' }))
      .body;
  });
  afterAll(async () => {
    await tap.stop();
    await catalog.stop();
  });

  it('publishes change_instance.created at submission with what the webhook body needs', async () => {
    const declaration = { namespace: 'team-a', quota: { cpu: 8 } };
    const { body } = await catalog.as(consumer, 'POST', `/v1/catalog/services/${service.id}/declarations/`, {
      declaration,
    });
    await outboxDrained(catalog.service);
    const events = (await tap.drain()).filter(
      (event) => event.data.change_instance_id === body.change_instance.id,
    );
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      type: CREATED,
      source: 'catalog',
      data: {
        change_instance_id: body.change_instance.id,
        service_item_id: body.service_item.id,
        declaration_id: body.declaration.id,
        consumer_id: consumer.id,
        consumer_name: consumer.username,
        service: {
          id: service.id,
          name: 'Kubernetes namespace',
          owner: { id: owner.id, name: owner.username },
        },
        state: 'PENDING',
        auto_approved: false,
      },
    });
    expect(JSON.parse(events[0]!.data.declaration_json as string)).toEqual(declaration);
  });

  it('publishes change_instance.state_changed with old and new state, reasons and who, once per change; none for a refused move', async () => {
    const { body } = await catalog.as(consumer, 'POST', `/v1/catalog/services/${service.id}/declarations/`, {
      declaration: { n: 1 },
    });
    const id = body.change_instance.id as number;
    const patch = (state: string, reasons?: string[]) =>
      catalog.as(owner, 'PATCH', `/v1/catalog/change_instances/${id}/`, {
        state,
        ...(reasons ? { reasons } : {}),
      });
    expect((await patch('APPROVED', ['ok'])).status).toBe(200);
    expect((await patch('APPROVED')).status).toBe(200);
    expect((await patch('COMPLETED')).status).toBe(409);
    expect((await patch('IN_PROGRESS')).status).toBe(200);
    await outboxDrained(catalog.service);
    const events = await tap.drain();
    expect(changesOf(events, id)).toEqual([
      'APPROVED -> IN_PROGRESS',
      'PENDING -> APPROVED',
      'created PENDING',
    ]);
    const approval = events.find((e) => e.data.change_instance_id === id && e.data.state === 'APPROVED')!;
    expect(approval.data).toMatchObject({
      old_state: 'PENDING',
      reasons: ['ok'],
      changed_by: { kind: 'user', user_id: owner.id, username: owner.username },
      service: { id: service.id, name: service.name, owner: { id: owner.id, name: owner.username } },
    });
    // The approval's number orders approvals for consumers (decision 0005); other moves carry none.
    expect(approval.data.approval_seq).toEqual(expect.any(Number));
    const started = events.find((e) => e.data.change_instance_id === id && e.data.state === 'IN_PROGRESS')!;
    expect(started.data.approval_seq).toBeUndefined();
  });

  it('publishes created and then PENDING -> APPROVED for a submission to an auto-approving Service', async () => {
    const auto = (
      await catalog.as(owner, 'POST', '/v1/catalog/services/', { name: 'Auto DNS', auto_approval: true })
    ).body;
    const { body } = await catalog.as(consumer, 'POST', `/v1/catalog/services/${auto.id}/declarations/`, {
      declaration: { host: 'a' },
    });
    await outboxDrained(catalog.service);
    const events = (await tap.drain()).filter(
      (event) => event.data.change_instance_id === body.change_instance.id,
    );
    expect(events.map((event) => event.type)).toEqual([CREATED, STATE_CHANGED]);
    expect(events[0]!.data).toMatchObject({ state: 'PENDING', auto_approved: true });
    expect(events[1]!.data).toMatchObject({
      old_state: 'PENDING',
      state: 'APPROVED',
      changed_by: { kind: 'auto_approval', user_id: null },
      approval_seq: expect.any(Number),
    });
  });
});

describe('change instance events while RabbitMQ is down', () => {
  let proxy: TcpProxy;
  let catalog: CatalogHarness;
  let tap: EventTap;

  beforeAll(async () => {
    const amqpUrl = process.env.AMQP_URL!;
    proxy = await TcpProxy.forUrl(amqpUrl).start();
    catalog = await startCatalog({ env: { AMQP_URL: proxy.rewrite(amqpUrl) } });
    tap = await EventTap.start(amqpUrl, catalog.namespace, ['catalog.change_instance.#']);
  });
  afterAll(async () => {
    proxy.restore();
    await tap.stop();
    await catalog.stop();
    await proxy.stop();
  });

  it('accepts every change during the outage and publishes each event exactly once when the broker is back', async () => {
    const manual = (await catalog.as(owner, 'POST', '/v1/catalog/services/', { name: 'Outage service' }))
      .body;
    const auto = (
      await catalog.as(owner, 'POST', '/v1/catalog/services/', { name: 'Outage auto', auto_approval: true })
    ).body;

    proxy.cut();
    await waitFor(() => !catalog.service.context.broker.isReady(), {
      what: 'catalog to notice the broker is gone',
    });

    const submitted = await catalog.as(consumer, 'POST', `/v1/catalog/services/${manual.id}/declarations/`, {
      declaration: { v: 1 },
    });
    expect(submitted.status).toBe(201);
    const id = submitted.body.change_instance.id as number;
    for (const state of ['APPROVED', 'IN_PROGRESS', 'FAILED', 'IN_PROGRESS', 'COMPLETED']) {
      expect(
        (await catalog.as(owner, 'PATCH', `/v1/catalog/change_instances/${id}/`, { state })).status,
      ).toBe(200);
    }
    const autoSubmitted = await catalog.as(
      consumer,
      'POST',
      `/v1/catalog/services/${auto.id}/declarations/`,
      { declaration: { v: 2 } },
    );
    expect(autoSubmitted.body.change_instance.state).toBe('APPROVED');
    const autoId = autoSubmitted.body.change_instance.id as number;

    // The changes are there for everyone to see while the broker is still down.
    expect((await catalog.as(consumer, 'GET', `/v1/catalog/change_instances/${id}/`)).body.state).toBe(
      'COMPLETED',
    );
    expect(catalog.service.context.broker.isReady()).toBe(false);
    expect(await tap.drain()).toEqual([]);

    proxy.restore();
    await outboxDrained(catalog.service);
    const events = await tap.drain();
    expect(changesOf(events, id)).toEqual(
      [
        'created PENDING',
        'PENDING -> APPROVED',
        'APPROVED -> IN_PROGRESS',
        'IN_PROGRESS -> FAILED',
        'FAILED -> IN_PROGRESS',
        'IN_PROGRESS -> COMPLETED',
      ].sort(),
    );
    expect(changesOf(events, autoId)).toEqual(['PENDING -> APPROVED', 'created PENDING']);
    expect(new Set(events.map((event) => event.id)).size).toBe(events.length);
    expect(events).toHaveLength(8);
  });
});
