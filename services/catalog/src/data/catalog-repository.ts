import type { Connection } from 'mongoose';
import { ServiceRepository } from './service-repository';
import type { ChangeInstanceState, Envelope, PageStart } from '@pack/contracts';
import {
  findPage,
  isDuplicateKey,
  LARGE_BATCH,
  nextCounterValue,
  nextId,
  outboxFields,
  whileUnavailable,
} from '@pack/db';
import type {
  ChangeInstanceFilter,
  ChangeInstanceRecord,
  DeclarationRecord,
  Page,
  ScopeFilter,
  ServiceItemRecord,
  ServiceOwnerRecord,
  TransitionRecord,
} from '../domain/model';
import type { CatalogStore, ItemTransitions, PointerHeads, Sequence } from '../domain/store';
import { CHANGE_INSTANCES, DECLARATIONS, SERVICE_ITEMS, SERVICE_OWNERS, TRANSITIONS } from './models';
import {
  advanceItemPointers,
  itemsWithoutPointers,
  markItemPointers,
  POINTERS_VERSION,
} from './item-pointer-writes';

/** Every database round trip of the catalog goes through here (docs/decisions/0007). */
export class CatalogRepository extends ServiceRepository implements CatalogStore {
  private readonly owners;
  private readonly items;
  private readonly declarations;
  private readonly views;
  private readonly transitions;

  /** The driver's collections: no mongoose casting or defaults, one command per call. */
  constructor(connection: Connection) {
    super(connection);
    this.owners = connection.collection<ServiceOwnerRecord>(SERVICE_OWNERS);
    this.items = connection.collection<ServiceItemRecord>(SERVICE_ITEMS);
    this.declarations = connection.collection<DeclarationRecord>(DECLARATIONS);
    this.views = connection.collection<ChangeInstanceRecord>(CHANGE_INSTANCES);
    this.transitions = connection.collection<TransitionRecord>(TRANSITIONS);
  }

  nextId(sequence: Sequence): Promise<number> {
    return nextId(this.connection, sequence);
  }

  nextApprovalNumber(): Promise<number> {
    return nextCounterValue(this.connection, 'approvals');
  }

  countChangeInstances(serviceId: number, states: readonly ChangeInstanceState[]): Promise<number> {
    return this.views.countDocuments({ service_id: serviceId, state: { $in: [...states] } });
  }

  // --- Service owners -----------------------------------------------------------------------

  findServiceOwner(id: number): Promise<ServiceOwnerRecord | null> {
    return this.owners.findOne({ _id: id });
  }

  async ensureServiceOwner(id: number, username: string, defaultAllow: boolean): Promise<ServiceOwnerRecord> {
    const existing = await this.findServiceOwner(id);
    if (existing) return existing;
    const now = new Date();
    const record = {
      _id: id,
      username,
      allow_service_creation: defaultAllow,
      created_at: now,
      updated_at: now,
    };
    try {
      await this.owners.insertOne(record);
      return record;
    } catch (error) {
      // A concurrent first request created it: theirs stands.
      if (!isDuplicateKey(error)) throw error;
      return (await this.findServiceOwner(id)) ?? record;
    }
  }

  async putServiceOwner(id: number, username: string, allow: boolean): Promise<ServiceOwnerRecord> {
    const now = new Date();
    const record = await this.owners.findOneAndUpdate(
      { _id: id },
      {
        $set: { username, allow_service_creation: allow, updated_at: now },
        $setOnInsert: { created_at: now },
      },
      { upsert: true, returnDocument: 'after' },
    );
    if (!record) throw new Error(`service owner ${id} upsert returned nothing`);
    return record;
  }

  listServiceOwners(limit: number, start: PageStart): Promise<Page<ServiceOwnerRecord>> {
    return findPage(this.owners, {}, { sort: { _id: 1 }, limit, ...start });
  }

  // --- Service Items ------------------------------------------------------------------------

  findServiceItem(id: number): Promise<ServiceItemRecord | null> {
    return this.items.findOne({ _id: id });
  }

  /** The unique index (consumer, Service) settles a race between two first submissions. */
  async ensureServiceItem(
    consumer: { id: number; name: string },
    serviceId: number,
  ): Promise<{ item: ServiceItemRecord; created: boolean }> {
    const find = () => this.items.findOne({ consumer_id: consumer.id, service_id: serviceId });
    const existing = await find();
    if (existing) return { item: existing, created: false };
    const item: ServiceItemRecord = {
      _id: await this.nextId('service_items'),
      service_id: serviceId,
      consumer_id: consumer.id,
      consumer_name: consumer.name,
      created_at: new Date(),
      pointers_version: POINTERS_VERSION,
    };
    try {
      await this.items.insertOne(item);
      return { item, created: true };
    } catch (error) {
      const winner = isDuplicateKey(error) ? await find() : null;
      if (!winner) throw error;
      return { item: winner, created: false };
    }
  }

  /**
   * A concurrent submission of the same consumer may have found the item and recorded a change
   * for it in the meantime; checking after the delete and putting the item back covers that.
   */
  async removeUnusedServiceItem(item: ServiceItemRecord): Promise<boolean> {
    const used = () => this.transitions.countDocuments({ service_item_id: item._id }, { limit: 1 });
    if ((await used()) > 0) return false;
    await this.items.deleteOne({ _id: item._id });
    if ((await used()) === 0) return false;
    await this.items.insertOne(item);
    return true;
  }

  listServiceItems(filter: ScopeFilter, limit: number, start: PageStart): Promise<Page<ServiceItemRecord>> {
    const query = scopeQuery(filter);
    if (!query) return Promise.resolve({ count: 0, items: [] });
    return findPage(this.items, query, { sort: { _id: -1 }, limit, ...start });
  }

  /**
   * The submissions (version-1 records) and approvals of some Service Items: two queries, each
   * one command (their number grows with the items' declarations, past a first batch's 101).
   * Their whole history: only the pointers' backfill and repair read it (one item at a time,
   * an equality our FerretDB answers in PostgreSQL), never a list (decision 0005, amendment).
   */
  async itemTransitions(itemIds: readonly number[]): Promise<ItemTransitions> {
    if (itemIds.length === 0) return { submissions: [], approvals: [] };
    const projection = {
      service_item_id: 1,
      declaration_id: 1,
      change_instance_id: 1,
      approval_seq: 1,
      approved_at: 1,
      created_at: 1,
    };
    const items = { service_item_id: itemIds.length === 1 ? itemIds[0] : { $in: [...itemIds] } };
    const [submissions, approvals] = await Promise.all([
      this.transitions.find({ ...items, version: 1 }, { projection, batchSize: LARGE_BATCH }).toArray(),
      this.transitions
        .find({ ...items, approval_seq: { $gt: 0 } }, { projection, batchSize: LARGE_BATCH })
        .toArray(),
    ]);
    return { submissions, approvals };
  }

  advanceItemPointers(itemId: number, heads: PointerHeads): Promise<void> {
    return advanceItemPointers(this.items, itemId, heads);
  }

  itemsWithoutPointers(limit: number): Promise<number[]> {
    return itemsWithoutPointers(this.items, limit);
  }

  markItemPointers(itemIds: readonly number[]): Promise<void> {
    return markItemPointers(this.items, itemIds);
  }

  // --- Declarations and transitions ---------------------------------------------------------

  async insertDeclaration(record: DeclarationRecord): Promise<void> {
    await this.declarations.insertOne(record);
  }

  findDeclaration(id: number): Promise<DeclarationRecord | null> {
    return this.declarations.findOne({ _id: id });
  }

  /**
   * The commit point of a change. When the database goes away as it is written (its answer lost
   * with the connection), it is tried again for up to 20 s, first checking whether it was written
   * (a record with its id, version and creation time is this one): the client is not told 503
   * for a change that happened, which its retry would make twice (docs/decisions/0051).
   */
  async insertTransition(record: TransitionRecord, events: Envelope[]): Promise<boolean> {
    const insert = () =>
      this.insertOnce(() => this.transitions.insertOne({ ...record, ...outboxFields(...events) }));
    const applied = async () =>
      (await this.transitions.countDocuments(
        { _id: record._id, version: record.version, created_at: record.created_at },
        { limit: 1 },
      )) === 1;
    return whileUnavailable(insert, true, { maxMs: 20_000, applied });
  }

  transitionsOf(changeInstanceId: number): Promise<TransitionRecord[]> {
    return this.transitions
      .find({ change_instance_id: changeInstanceId }, { sort: { version: 1 }, batchSize: LARGE_BATCH })
      .project<TransitionRecord>({ _outbox: 0, _outbox_pending: 0 })
      .toArray();
  }

  // --- The change instance view -------------------------------------------------------------

  findChangeInstance(id: number): Promise<ChangeInstanceRecord | null> {
    return this.views.findOne({ _id: id });
  }

  insertChangeInstance(record: ChangeInstanceRecord): Promise<boolean> {
    return this.insertOnce(() => this.views.insertOne(record));
  }

  /** Absolute values of every field a transition changes, so a view that missed one catches up. */
  async updateChangeInstance(instance: ChangeInstanceRecord): Promise<void> {
    const { state, version, reasons, approval_seq, approved_at, updated_at, validation } = instance;
    const set = { state, version, reasons, approval_seq, approved_at, updated_at };
    await this.views.updateOne(
      { _id: instance._id, version: { $lt: version } },
      { $set: validation === undefined ? set : { ...set, validation } },
    );
  }

  listChangeInstances(
    filter: ChangeInstanceFilter,
    limit: number,
    start: PageStart,
  ): Promise<Page<ChangeInstanceRecord>> {
    const { states, service_item_id, ...scope } = filter;
    const query = scopeQuery(scope);
    if (!query) return Promise.resolve({ count: 0, items: [] });
    if (service_item_id !== undefined) query.service_item_id = service_item_id;
    if (states) query.state = states.length === 1 ? states[0] : { $in: [...states] };
    return findPage(this.views, query, { sort: { _id: -1 }, limit, ...start });
  }

  /** True when inserted; false when a document with that key exists (someone was first). */
  private async insertOnce(insert: () => Promise<unknown>): Promise<boolean> {
    try {
      await insert();
      return true;
    } catch (error) {
      if (isDuplicateKey(error)) return false;
      throw error;
    }
  }
}

/** The query of a scope, or null when the scope admits nothing (an owner without Services). */
function scopeQuery(filter: ScopeFilter): Record<string, unknown> | null {
  const query: Record<string, unknown> = {};
  if (filter.consumer_id !== undefined) query.consumer_id = filter.consumer_id;
  if (filter.service_ids !== undefined) {
    const allowed =
      filter.service_id === undefined
        ? filter.service_ids
        : filter.service_ids.filter((id) => id === filter.service_id);
    if (allowed.length === 0) return null;
    query.service_id = allowed.length === 1 ? allowed[0] : { $in: [...allowed] };
  } else if (filter.service_id !== undefined) {
    query.service_id = filter.service_id;
  }
  return query;
}
