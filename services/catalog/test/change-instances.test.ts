import type { ChangeInstanceState } from '@pack/contracts';
import { outboxDrained, waitFor } from '@pack/testkit';
import { VALIDATION_CONSUMER } from '../src/messaging/validation-consumer';
import {
  admin,
  consumer,
  events,
  newUser,
  otherOwner,
  owner,
  startCatalog,
  type CatalogHarness,
} from './harness';

/** Every legal move of docs/decisions/0005, written out (not read from the code under test). */
const LEGAL_MOVES: [ChangeInstanceState, ChangeInstanceState][] = [
  ['PENDING', 'APPROVED'],
  ['PENDING', 'REJECTED'],
  ['PENDING', 'CANCELLED'],
  ['APPROVED', 'IN_PROGRESS'],
  ['APPROVED', 'CANCELLED'],
  ['IN_PROGRESS', 'COMPLETED'],
  ['IN_PROGRESS', 'FAILED'],
  ['IN_PROGRESS', 'CANCELLED'],
  ['FAILED', 'IN_PROGRESS'],
];

/** How to reach each state from PENDING through the owner's own moves. */
const PATH_TO: Record<ChangeInstanceState, ChangeInstanceState[]> = {
  PENDING: [],
  APPROVED: ['APPROVED'],
  IN_PROGRESS: ['APPROVED', 'IN_PROGRESS'],
  FAILED: ['APPROVED', 'IN_PROGRESS', 'FAILED'],
  COMPLETED: ['APPROVED', 'IN_PROGRESS', 'COMPLETED'],
  REJECTED: ['REJECTED'],
  CANCELLED: ['CANCELLED'],
};

describe('change instance transitions', () => {
  let catalog: CatalogHarness;
  let service: { id: number };

  const submit = (declaration: Record<string, unknown> = { size: 'M' }, who = consumer) =>
    catalog.submit(service.id, declaration, who);
  const move = (id: number, state: string, who = owner, reasons?: string[]) =>
    catalog.as(who, 'PATCH', `/v1/catalog/change_instances/${id}/`, {
      state,
      ...(reasons ? { reasons } : {}),
    });
  const walk = async (id: number, to: ChangeInstanceState) => {
    for (const step of PATH_TO[to]) expect((await move(id, step)).status).toBe(200);
  };

  beforeAll(async () => {
    catalog = await startCatalog();
    service = (await catalog.as(owner, 'POST', '/v1/catalog/services/', { name: 'Load balancer' })).body;
  });
  afterAll(async () => {
    await catalog.stop();
  });

  it.each(LEGAL_MOVES)('lets the Service Owner move a change instance %s -> %s', async (from, to) => {
    const { change_instance } = await submit();
    await walk(change_instance.id, from);
    const { status, body } = await move(change_instance.id, to, owner, ['checked by olivia']);
    expect(status).toBe(200);
    expect(body.state).toBe(to);
    expect(body.reasons).toEqual(['checked by olivia']);
    expect(body.history.at(-1)).toMatchObject({
      from,
      to,
      by: { kind: 'user', user_id: owner.id, username: owner.username },
    });
    expect(
      (await catalog.as(consumer, 'GET', `/v1/catalog/change_instances/${change_instance.id}/`)).body.state,
    ).toBe(to);
  });

  it('refuses an illegal transition with 409 naming both states, and changes nothing', async () => {
    const { change_instance } = await submit();
    const { status, body } = await move(change_instance.id, 'COMPLETED');
    expect(status).toBe(409);
    expect(body.detail).toContain('from PENDING to COMPLETED');
    const after = await catalog.as(owner, 'GET', `/v1/catalog/change_instances/${change_instance.id}/`);
    expect(after.body.state).toBe('PENDING');
    expect(after.body.history).toHaveLength(1);

    await move(change_instance.id, 'REJECTED');
    const fromFinal = await move(change_instance.id, 'APPROVED');
    expect(fromFinal.status).toBe(409);
    expect(fromFinal.body.detail).toContain('REJECTED is final');
  });

  it('treats a move to the current state as a repeat: 200, nothing changes', async () => {
    const { change_instance } = await submit();
    await move(change_instance.id, 'APPROVED');
    const again = await move(change_instance.id, 'APPROVED');
    expect(again.status).toBe(200);
    expect(again.body.history).toHaveLength(2);
  });

  it('lets only the owning service owner or an admin move it: 403 for consumers, 404 for other owners', async () => {
    const { change_instance } = await submit();
    expect((await move(change_instance.id, 'APPROVED', consumer)).status).toBe(403);
    expect((await move(change_instance.id, 'APPROVED', otherOwner)).status).toBe(404);
    expect((await move(999_999, 'APPROVED')).status).toBe(404);
    const bad = await move(change_instance.id, 'DONE');
    expect(bad.status).toBe(400);
    expect(bad.body.errors.state).toBeDefined();
    expect(
      (await catalog.as(owner, 'GET', `/v1/catalog/change_instances/${change_instance.id}/`)).body.state,
    ).toBe('PENDING');
    expect((await move(change_instance.id, 'APPROVED', admin)).status).toBe(200);
  });

  it('makes the declaration of the latest approval the latest approved one of its Service Item', async () => {
    const buyer = newUser('consumer');
    const first = await submit({ version: 1 }, buyer);
    const second = await submit({ version: 2 }, buyer);
    const item = first.service_item.id;
    expect(second.service_item.id).toBe(item);
    const latest = () =>
      catalog.as(admin, 'GET', `/v1/catalog/service_items/${item}/latest_approved_declaration/`);
    expect((await latest()).status).toBe(404);

    await move(second.change_instance.id, 'APPROVED');
    expect((await latest()).body).toMatchObject({
      declaration_id: second.declaration.id,
      declaration: { version: 2 },
    });
    await move(first.change_instance.id, 'APPROVED');
    expect((await latest()).body).toMatchObject({
      declaration_id: first.declaration.id,
      change_instance: first.change_instance.id,
      declaration: { version: 1 },
    });
    const itemView = await catalog.as(buyer, 'GET', `/v1/catalog/service_items/${item}/`);
    expect(itemView.body).toMatchObject({
      latest_declaration_id: second.declaration.id,
      latest_approved_declaration_id: first.declaration.id,
    });
  });

  it('answers 404 for the latest approved declaration of an item with no approval yet', async () => {
    const other = (await catalog.as(owner, 'POST', '/v1/catalog/services/', { name: 'Firewall rule' })).body;
    const { body } = await catalog.as(consumer, 'POST', `/v1/catalog/services/${other.id}/declarations/`, {
      declaration: { port: 443 },
    });
    const reply = await catalog.as(
      owner,
      'GET',
      `/v1/catalog/service_items/${body.service_item.id}/latest_approved_declaration/`,
    );
    expect(reply.status).toBe(404);
    expect(reply.body.detail).toContain('no approved declaration');
  });

  describe('Change Instance Validator decisions', () => {
    const processed = (eventId: string) =>
      waitFor(
        async () =>
          catalog
            .collection('processed_events')
            .findOne({ _id: `${VALIDATION_CONSUMER}:${eventId}` as never }),
        {
          what: `validator event ${eventId} handled`,
        },
      );

    it('approves a PENDING change instance with the reasons given', async () => {
      const { change_instance, service_item } = await submit({ size: 'L' });
      const eventId = await catalog.publish(events.changeInstanceValidationDecided, {
        change_instance_id: change_instance.id,
        decision: 'approve',
        reasons: ['fits the quota'],
      });
      await processed(eventId);
      const after = await catalog.as(owner, 'GET', `/v1/catalog/change_instances/${change_instance.id}/`);
      expect(after.body).toMatchObject({ state: 'APPROVED', reasons: ['fits the quota'] });
      expect(after.body.history.at(-1)).toMatchObject({
        from: 'PENDING',
        to: 'APPROVED',
        by: { kind: 'validator', user_id: null },
      });
      const item = await catalog.as(consumer, 'GET', `/v1/catalog/service_items/${service_item.id}/`);
      expect(item.body.latest_approved_change_instance_id).toBe(change_instance.id);
    });

    it('rejects a PENDING change instance with the reasons given', async () => {
      const { change_instance } = await submit({ size: 'XXL' });
      const eventId = await catalog.publish(events.changeInstanceValidationDecided, {
        change_instance_id: change_instance.id,
        decision: 'reject',
        reasons: ['too large', 'no budget'],
      });
      await processed(eventId);
      const after = await catalog.as(consumer, 'GET', `/v1/catalog/change_instances/${change_instance.id}/`);
      expect(after.body).toMatchObject({ state: 'REJECTED', reasons: ['too large', 'no budget'] });
    });

    it('leaves a change instance alone once the Service Owner has decided', async () => {
      const { change_instance } = await submit({ size: 'S' });
      await move(change_instance.id, 'REJECTED', owner, ['not now']);
      const eventId = await catalog.publish(events.changeInstanceValidationDecided, {
        change_instance_id: change_instance.id,
        decision: 'approve',
        reasons: ['looks fine'],
      });
      await processed(eventId);
      const after = await catalog.as(owner, 'GET', `/v1/catalog/change_instances/${change_instance.id}/`);
      expect(after.body).toMatchObject({ state: 'REJECTED', reasons: ['not now'] });
      expect(after.body.history).toHaveLength(2);
    });

    it('drops a decision about an unknown change instance without retrying it forever', async () => {
      const before = await catalog.collection('change_instances').countDocuments();
      const eventId = await catalog.publish(events.changeInstanceValidationDecided, {
        change_instance_id: 987_654,
        decision: 'approve',
        reasons: [],
      });
      // Marked handled (so never redelivered), and nothing was made up for the unknown id.
      expect(await processed(eventId)).toMatchObject({ _id: `${VALIDATION_CONSUMER}:${eventId}` });
      expect((await catalog.as(admin, 'GET', '/v1/catalog/change_instances/987654/')).status).toBe(404);
      expect(await catalog.collection('change_instances').countDocuments()).toBe(before);
    });
  });
});

describe('two catalog replicas deciding the same change instance at once', () => {
  let first: CatalogHarness;
  let second: CatalogHarness;
  beforeAll(async () => {
    first = await startCatalog();
    second = await first.replica();
  });
  afterAll(async () => {
    await second.stop();
    await first.stop();
  });

  it('lets exactly one decision win; the other gets 409', async () => {
    const service = (await first.as(owner, 'POST', '/v1/catalog/services/', { name: 'Shared volume' })).body;
    for (let round = 0; round < 5; round += 1) {
      const { body } = await second.as(consumer, 'POST', `/v1/catalog/services/${service.id}/declarations/`, {
        declaration: { round },
      });
      const id = body.change_instance.id as number;
      const replies = await Promise.all([
        first.as(owner, 'PATCH', `/v1/catalog/change_instances/${id}/`, { state: 'APPROVED' }),
        second.as(owner, 'PATCH', `/v1/catalog/change_instances/${id}/`, { state: 'REJECTED' }),
      ]);
      expect(replies.map((r) => r.status).sort()).toEqual([200, 409]);
      const winner = replies.find((r) => r.status === 200)!.body.state as string;
      const stored = await first.as(owner, 'GET', `/v1/catalog/change_instances/${id}/`);
      expect(stored.body.state).toBe(winner);
      expect(stored.body.history).toHaveLength(2);
    }
  });
});

describe('a change whose request stopped before updating the change instance view', () => {
  let catalog: CatalogHarness;
  beforeAll(async () => {
    catalog = await startCatalog();
  });
  afterAll(async () => {
    await catalog.stop();
  });

  const setUp = async () => {
    const service = (
      await catalog.as(owner, 'POST', '/v1/catalog/services/', { name: `Crash ${Date.now()}` })
    ).body;
    const { body } = await catalog.as(consumer, 'POST', `/v1/catalog/services/${service.id}/declarations/`, {
      declaration: { a: 1 },
    });
    const id = body.change_instance.id as number;
    expect(
      (await catalog.as(owner, 'PATCH', `/v1/catalog/change_instances/${id}/`, { state: 'APPROVED' })).status,
    ).toBe(200);
    await outboxDrained(catalog.service);
    // As if the process had died between recording the approval and updating the view.
    await catalog
      .collection('change_instances')
      .updateOne({ _id: id as never }, { $set: { state: 'PENDING', version: 1 } });
    expect((await catalog.as(owner, 'GET', `/v1/catalog/change_instances/${id}/`)).body.state).toBe(
      'PENDING',
    );
    return { id, service };
  };

  it('is caught up by the next move, which decides from the recorded state', async () => {
    const { id } = await setUp();
    const moved = await catalog.as(owner, 'PATCH', `/v1/catalog/change_instances/${id}/`, {
      state: 'IN_PROGRESS',
    });
    expect(moved.status).toBe(200);
    expect(moved.body.history.map((h: { to: string }) => h.to)).toEqual([
      'PENDING',
      'APPROVED',
      'IN_PROGRESS',
    ]);
  });

  it('is caught up when the event of the change reaches the catalog', async () => {
    const { id, service } = await setUp();
    await catalog.publish(events.changeInstanceStateChanged, {
      change_instance_id: id,
      service_item_id: 0,
      declaration_id: 0,
      declaration_json: '{}',
      consumer_id: consumer.id,
      consumer_name: consumer.username,
      service: { id: service.id, name: service.name, owner: { id: owner.id, name: owner.username } },
      state: 'APPROVED',
      old_state: 'PENDING',
      reasons: [],
      changed_by: { kind: 'user', user_id: owner.id, username: owner.username },
    });
    const view = await waitFor(
      async () => {
        const answer = await catalog.as(owner, 'GET', `/v1/catalog/change_instances/${id}/`);
        return answer.body.state === 'APPROVED' ? answer.body : undefined;
      },
      { what: 'view rolled forward' },
    );
    expect(view.history.map((h: { to: string }) => h.to)).toEqual(['PENDING', 'APPROVED']);
  });
});
