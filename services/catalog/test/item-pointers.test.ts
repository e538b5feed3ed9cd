import mongoose, { type Connection, type mongo } from 'mongoose';
import { CatalogRepository } from '../src/data/catalog-repository';
import { SERVICE_ITEMS, TRANSITIONS } from '../src/data/models';
import {
  currentInstance,
  serviceRef,
  step,
  transitionOf,
} from '../src/domain/change-instances/change-records';
import { ItemPointerUpdates } from '../src/domain/change-instances/item-pointer-updates';
import { pointersOf, storedPointers } from '../src/domain/change-instances/item-pointers';
import { stateChangedEvent } from '../src/domain/events';
import type { ServiceItemRecord, TransitionRecord } from '../src/domain/model';
import { consumer, newUser, owner, startCatalog, type CatalogHarness } from './harness';

/**
 * The Service Item list read every transition record of its page's items (on
 * our FerretDB, every record of the database, unmarshalled in Go); in the 30-minute soak it went
 * from 9 ms to 20-30 s. The pointers are now kept on the item (decision 0005, amendment).
 */
describe('Service Item pointers kept on the item', () => {
  let catalog: CatalogHarness;
  let repository: CatalogRepository;

  const newService = async (name: string, autoApproval = false) =>
    (await catalog.as(owner, 'POST', '/v1/catalog/services/', { name, auto_approval: autoApproval }))
      .body as {
      id: number;
    };
  const submit = (serviceId: number, declaration: unknown, who = consumer) =>
    catalog.submit(serviceId, declaration, who);
  const itemView = async (id: number) =>
    (await catalog.as(owner, 'GET', `/v1/catalog/service_items/${id}/`)).body as Record<string, unknown>;
  const items = () => catalog.collection(SERVICE_ITEMS) as unknown as mongo.Collection<ServiceItemRecord>;

  beforeAll(async () => {
    catalog = await startCatalog();
    repository = new CatalogRepository(catalog.service.context.mongo.connection);
  });
  afterAll(async () => {
    await catalog.stop();
  });

  it('a writer that died between the record (the commit point) and the pointer update: the outbox relay sets the pointer before it publishes the events', async () => {
    const service = await newService('Pointers crash');
    const submitted = await submit(service.id, { size: 'S' });
    const item = submitted.service_item.id;
    const { outbox } = catalog.service.context;
    await outbox.stop();
    // What the dead writer left: the approval's record with its event, nothing after it.
    const records = await repository.transitionsOf(submitted.change_instance.id);
    const instance = currentInstance(records)!;
    const now = new Date();
    const approved = {
      ...instance,
      state: 'APPROVED' as const,
      version: instance.version + 1,
      reasons: [],
      approval_seq: await repository.nextApprovalNumber(),
      approved_at: now,
      updated_at: now,
    };
    const actor = { kind: 'user' as const, userId: owner.id, username: owner.username, role: owner.role };
    const transition = transitionOf(approved, [step('PENDING', 'APPROVED', actor, [])], now);
    const event = stateChangedEvent(
      instance,
      serviceRef(undefined, instance),
      '{"size":"S"}',
      { from: 'PENDING', to: 'APPROVED', reasons: [], actor },
      now,
    );
    expect(await repository.insertTransition(transition, [event])).toBe(true);
    expect(await itemView(item)).toMatchObject({ latest_approved_change_instance_id: null });

    outbox.start();
    await outbox.flush();
    expect(await itemView(item)).toMatchObject({
      latest_declaration_id: submitted.declaration.id,
      latest_approved_declaration_id: submitted.declaration.id,
      latest_approved_change_instance_id: submitted.change_instance.id,
      latest_approved_at: now.toISOString(),
    });
    const left = await catalog.collection(TRANSITIONS).findOne({ _id: transition._id as never });
    expect(left?._outbox).toEqual([]);
  });

  it('items stored before the pointers were kept get them at start, in slices, from two replicas at once', async () => {
    const service = await newService('Pointers backfill', true);
    const buyers = [newUser('consumer'), newUser('consumer')];
    const latest = [];
    for (const buyer of buyers) {
      await submit(service.id, { v: 1 }, buyer);
      latest.push(await submit(service.id, { v: 2 }, buyer));
    }
    const ids = latest.map((one) => one.service_item.id);
    const expected = await Promise.all(ids.map(itemView));
    // 150 more items with no history at all: more than one slice.
    const empty = Array.from({ length: 150 }, (_, i) => ({
      _id: 9_000_000 + i,
      service_id: service.id,
      consumer_id: 9_000_000 + i,
      consumer_name: `legacy-${i}`,
      created_at: new Date(),
    }));
    await items().insertMany(empty);
    // As data written before this change: no pointers, no pointers_version.
    await items().updateMany(
      { service_id: service.id },
      {
        $unset: {
          latest_declaration_id: '',
          latest_submitted_at: '',
          latest_approval_seq: '',
          latest_approved_declaration_id: '',
          latest_approved_change_instance_id: '',
          latest_approved_at: '',
          pointers_version: '',
        },
      },
    );
    expect(await itemView(ids[0]!)).toMatchObject({ latest_declaration_id: null });

    const logger = catalog.service.context.logger;
    const done = await Promise.all([
      new ItemPointerUpdates(repository, logger).backfill(),
      new ItemPointerUpdates(repository, logger).backfill(),
    ]);
    expect(done[0] + done[1]).toBeGreaterThanOrEqual(152);
    expect(await items().countDocuments({ service_id: service.id, pointers_version: 1 })).toBe(152);
    expect(await Promise.all(ids.map(itemView))).toEqual(expected);
    expect(expected[0]).toMatchObject({
      latest_declaration_id: latest[0]!.declaration.id,
      latest_approved_declaration_id: latest[0]!.declaration.id,
    });
    // A replica starting now finds nothing left to do.
    const replica = await catalog.replica();
    await replica.stop({ keepData: true });
    expect(await new ItemPointerUpdates(repository, logger).backfill()).toBe(0);
  });

  describe('two replicas committing submissions and approvals of one item', () => {
    const connections: Connection[] = [];
    beforeAll(async () => {
      for (let i = 0; i < 2; i += 1)
        connections.push(
          await mongoose
            .createConnection(catalog.env.MONGO_URL!, { dbName: catalog.env.MONGO_DB!, maxPoolSize: 4 })
            .asPromise(),
        );
    });
    afterAll(async () => {
      await Promise.all(connections.map((connection) => connection.close(true)));
    });

    it.each([1, 2, 3])(
      'in random order (round %i) end at the latest submission and approval',
      async (round) => {
        const itemId = 8_000_000 + round;
        await items().insertOne({
          _id: itemId,
          service_id: 1,
          consumer_id: itemId,
          consumer_name: 'racer',
          created_at: new Date(),
          pointers_version: 1,
        });
        const base = round * 100_000;
        // 20 submissions and 20 approvals; some approvals share a number (a FerretDB that loses
        // counter updates): the later change instance wins those.
        const records: TransitionRecord[] = Array.from({ length: 20 }, (_, i) => {
          const declaration = base + i + 1;
          const at = new Date(Date.UTC(2026, 0, 1, 0, 0, i));
          const row = { change_instance_id: declaration, service_id: 1, service_item_id: itemId };
          const common = { ...row, declaration_id: declaration, steps: [], reasons: [], initial: null };
          return [
            {
              ...common,
              _id: `${declaration}:1`,
              version: 1,
              state: 'PENDING',
              approval_seq: 0,
              approved_at: null,
              created_at: at,
            },
            {
              ...common,
              _id: `${declaration}:2`,
              version: 2,
              state: 'APPROVED',
              approval_seq: base + Math.floor(Math.random() * 12),
              approved_at: at,
              created_at: at,
            },
          ] as TransitionRecord[];
        }).flat();
        const shuffled = records
          .map((one) => ({ one, key: Math.random() }))
          .sort((a, b) => a.key - b.key)
          .map(({ one }) => one);
        const logger = catalog.service.context.logger;
        const writers = connections.map(
          (connection) => new ItemPointerUpdates(new CatalogRepository(connection), logger),
        );
        const stores = connections.map((connection) => new CatalogRepository(connection));
        await Promise.all(
          shuffled.map(async (one, index) => {
            const writer = index % 2;
            expect(await stores[writer]!.insertTransition(one, [])).toBe(true);
            await writers[writer]!.afterCommit(one);
          }),
        );
        const expected = pointersOf([itemId], {
          submissions: records.filter((one) => one.version === 1),
          approvals: records.filter((one) => one.approval_seq > 0),
        }).get(itemId);
        const stored = await items().findOne({ _id: itemId });
        expect(storedPointers(stored!)).toEqual(expected);
        expect(expected?.latest_declaration_id).toBe(base + 20);
      },
    );
  });
});
