import type { Connection } from 'mongoose';
import type { ChangeInstanceState, Envelope } from '@pack/contracts';
import { isDuplicateKey, nextId, outboxFields } from '@pack/db';
import { ConflictError } from '@pack/http-kit';
import type {
  CatalogModels,
  ChangeInstanceRecord,
  DeclarationRecord,
  ServiceItemRecord,
  ServiceOwnerRecord,
  ServiceRecord,
  TransitionRecord,
} from './models';

export interface Page<T> {
  count: number;
  items: T[];
}

/** Which items or change instances a list may show; `service_ids` empty means none. */
export interface ScopeFilter {
  consumer_id?: number;
  service_ids?: readonly number[];
  service_id?: number;
}

export interface ChangeInstanceFilter extends ScopeFilter {
  service_item_id?: number;
  /** null or absent: every state. */
  states?: readonly ChangeInstanceState[] | null;
}

/** What a Service Item's transitions say about it. */
export interface ItemPointers {
  latest_declaration_id: number | null;
  latest_submitted_at: Date | null;
  latest_approved_declaration_id: number | null;
  latest_approved_change_instance_id: number | null;
  latest_approved_at: Date | null;
}

type Sequence = 'services' | 'service_items' | 'declarations' | 'change_instances' | 'approvals';

/**
 * Every database round trip of the catalog goes through here.
 *
 * FerretDB v1 applies an update by reading the document and writing it back, so two updates of
 * one document can lose each other and a conditional update is no guard. The catalog therefore
 * decides races only with unique inserts (ids, Service Items, transition records) and updates
 * only documents that have a single writer at a time (docs/decisions/0007).
 */
export class CatalogRepository {
  constructor(
    private readonly connection: Connection,
    private readonly models: CatalogModels,
  ) {}

  nextId(sequence: Sequence): Promise<number> {
    return nextId(this.connection, sequence);
  }

  // --- Services -----------------------------------------------------------------------------

  async insertService(record: ServiceRecord): Promise<void> {
    await this.models.services.collection.insertOne(record as never).catch(duplicateName(record.name));
  }

  findService(id: number): Promise<ServiceRecord | null> {
    return this.models.services.findById(id).lean<ServiceRecord>().exec();
  }

  async findServices(ids: readonly number[]): Promise<Map<number, ServiceRecord>> {
    if (ids.length === 0) return new Map();
    const rows = await this.models.services
      .find({ _id: { $in: [...new Set(ids)] } })
      .lean<ServiceRecord[]>()
      .exec();
    return new Map(rows.map((row) => [row._id, row]));
  }

  async serviceIdsOwnedBy(ownerId: number): Promise<number[]> {
    const rows = await this.models.services
      .find({ owner_id: ownerId }, { _id: 1 })
      .lean<{ _id: number }[]>()
      .exec();
    return rows.map((row) => row._id);
  }

  async listServices(
    filter: { owner_id?: number },
    limit: number,
    offset: number,
  ): Promise<Page<ServiceRecord>> {
    const query = filter.owner_id === undefined ? {} : { owner_id: filter.owner_id };
    const [count, items] = await Promise.all([
      this.models.services.countDocuments(query),
      this.models.services
        .find(query)
        .sort({ _id: 1 })
        .skip(offset)
        .limit(limit)
        .lean<ServiceRecord[]>()
        .exec(),
    ]);
    return { count, items };
  }

  /** Last writer wins between two concurrent edits of one Service (as for any PATCH of a resource). */
  async updateService(id: number, set: Partial<ServiceRecord>): Promise<ServiceRecord | null> {
    return (await this.models.services.collection
      .findOneAndUpdate({ _id: id as never }, { $set: set }, { returnDocument: 'after' })
      .catch(duplicateName(set.name ?? ''))) as ServiceRecord | null;
  }

  async deleteService(id: number): Promise<void> {
    await this.models.services.collection.deleteOne({ _id: id as never });
  }

  countChangeInstances(serviceId: number, states: readonly ChangeInstanceState[]): Promise<number> {
    return this.models.changeInstances
      .countDocuments({ service_id: serviceId, state: { $in: [...states] } })
      .exec();
  }

  // --- Service owners -----------------------------------------------------------------------

  findServiceOwner(id: number): Promise<ServiceOwnerRecord | null> {
    return this.models.serviceOwners.findById(id).lean<ServiceOwnerRecord>().exec();
  }

  /** The owner's record, created with `defaultAllow` the first time the catalog meets them. */
  async ensureServiceOwner(id: number, username: string, defaultAllow: boolean): Promise<ServiceOwnerRecord> {
    const existing = await this.findServiceOwner(id);
    if (existing) return existing;
    const now = new Date();
    const record: ServiceOwnerRecord = {
      _id: id,
      username,
      allow_service_creation: defaultAllow,
      created_at: now,
      updated_at: now,
    };
    try {
      await this.models.serviceOwners.collection.insertOne(record as never);
      return record;
    } catch (error) {
      // A concurrent first request created it: theirs stands.
      if (!isDuplicateKey(error)) throw error;
      return (await this.findServiceOwner(id)) ?? record;
    }
  }

  async putServiceOwner(id: number, username: string, allow: boolean): Promise<ServiceOwnerRecord> {
    const now = new Date();
    const record = await this.models.serviceOwners.collection.findOneAndUpdate(
      { _id: id as never },
      {
        $set: { username, allow_service_creation: allow, updated_at: now },
        $setOnInsert: { created_at: now },
      },
      { upsert: true, returnDocument: 'after' },
    );
    if (!record) throw new Error(`service owner ${id} upsert returned nothing`);
    return record as unknown as ServiceOwnerRecord;
  }

  async listServiceOwners(limit: number, offset: number): Promise<Page<ServiceOwnerRecord>> {
    const [count, items] = await Promise.all([
      this.models.serviceOwners.countDocuments({}),
      this.models.serviceOwners
        .find({})
        .sort({ _id: 1 })
        .skip(offset)
        .limit(limit)
        .lean<ServiceOwnerRecord[]>()
        .exec(),
    ]);
    return { count, items };
  }

  // --- Service Items ------------------------------------------------------------------------

  findServiceItem(id: number): Promise<ServiceItemRecord | null> {
    return this.models.serviceItems.findById(id).lean<ServiceItemRecord>().exec();
  }

  /** The consumer's item for a Service, created if missing; the unique index settles a race. */
  async ensureServiceItem(
    consumer: { id: number; name: string },
    serviceId: number,
  ): Promise<ServiceItemRecord> {
    const find = () =>
      this.models.serviceItems
        .findOne({ consumer_id: consumer.id, service_id: serviceId })
        .lean<ServiceItemRecord>()
        .exec();
    const existing = await find();
    if (existing) return existing;
    const record: ServiceItemRecord = {
      _id: await this.nextId('service_items'),
      service_id: serviceId,
      consumer_id: consumer.id,
      consumer_name: consumer.name,
      created_at: new Date(),
    };
    try {
      await this.models.serviceItems.collection.insertOne(record as never);
      return record;
    } catch (error) {
      if (!isDuplicateKey(error)) throw error;
      const winner = await find();
      if (!winner) throw error;
      return winner;
    }
  }

  async listServiceItems(
    filter: ScopeFilter,
    limit: number,
    offset: number,
  ): Promise<Page<ServiceItemRecord>> {
    const query = scopeQuery(filter);
    if (!query) return { count: 0, items: [] };
    const [count, items] = await Promise.all([
      this.models.serviceItems.countDocuments(query),
      this.models.serviceItems
        .find(query)
        .sort({ _id: -1 })
        .skip(offset)
        .limit(limit)
        .lean<ServiceItemRecord[]>()
        .exec(),
    ]);
    return { count, items };
  }

  /**
   * Latest and latest approved declaration of each item, from the transition records (two
   * queries for a whole page): the latest submission is the newest version-1 record, the latest
   * approval the record with the highest approval number.
   */
  async itemPointers(itemIds: readonly number[]): Promise<Map<number, ItemPointers>> {
    const result = new Map<number, ItemPointers>(
      itemIds.map((id) => [
        id,
        {
          latest_declaration_id: null,
          latest_submitted_at: null,
          latest_approved_declaration_id: null,
          latest_approved_change_instance_id: null,
          latest_approved_at: null,
        },
      ]),
    );
    if (itemIds.length === 0) return result;
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
      this.models.transitions
        .find({ ...items, version: 1 }, projection)
        .lean<TransitionRecord[]>()
        .exec(),
      this.models.transitions
        .find({ ...items, approval_seq: { $gt: 0 } }, projection)
        .lean<TransitionRecord[]>()
        .exec(),
    ]);
    const approvalSeq = new Map<number, number>();
    for (const row of submissions) {
      const pointers = result.get(row.service_item_id);
      if (pointers && (pointers.latest_declaration_id ?? 0) < row.declaration_id) {
        pointers.latest_declaration_id = row.declaration_id;
        pointers.latest_submitted_at = row.created_at;
      }
    }
    for (const row of approvals) {
      const pointers = result.get(row.service_item_id);
      if (!pointers || (approvalSeq.get(row.service_item_id) ?? 0) >= row.approval_seq) continue;
      approvalSeq.set(row.service_item_id, row.approval_seq);
      pointers.latest_approved_declaration_id = row.declaration_id;
      pointers.latest_approved_change_instance_id = row.change_instance_id;
      pointers.latest_approved_at = row.approved_at;
    }
    return result;
  }

  // --- Declarations -------------------------------------------------------------------------

  async insertDeclaration(record: DeclarationRecord): Promise<void> {
    await this.models.declarations.collection.insertOne(record as never);
  }

  findDeclaration(id: number): Promise<DeclarationRecord | null> {
    return this.models.declarations.findById(id).lean<DeclarationRecord>().exec();
  }

  // --- Change Instances ---------------------------------------------------------------------

  /** Inserts the view of a new instance; false if it is there already (a roll-forward beat us). */
  async insertChangeInstance(record: ChangeInstanceRecord): Promise<boolean> {
    try {
      await this.models.changeInstances.collection.insertOne(record as never);
      return true;
    } catch (error) {
      if (isDuplicateKey(error)) return false;
      throw error;
    }
  }

  findChangeInstance(id: number): Promise<ChangeInstanceRecord | null> {
    return this.models.changeInstances.findById(id).lean<ChangeInstanceRecord>().exec();
  }

  async listChangeInstances(
    filter: ChangeInstanceFilter,
    limit: number,
    offset: number,
  ): Promise<Page<ChangeInstanceRecord>> {
    const { states, service_item_id, ...scope } = filter;
    const query = scopeQuery(scope);
    if (!query) return { count: 0, items: [] };
    if (service_item_id !== undefined) query.service_item_id = service_item_id;
    if (states) query.state = states.length === 1 ? states[0] : { $in: [...states] };
    const [count, items] = await Promise.all([
      this.models.changeInstances.countDocuments(query),
      this.models.changeInstances
        .find(query)
        .sort({ _id: -1 })
        .skip(offset)
        .limit(limit)
        .lean<ChangeInstanceRecord[]>()
        .exec(),
    ]);
    return { count, items };
  }

  /** Brings the view up to `version`. Only versions in order are applied (see ChangeInstances.rollForward). */
  async applyToChangeInstance(id: number, set: Partial<ChangeInstanceRecord>): Promise<void> {
    await this.models.changeInstances.collection.updateOne(
      { _id: id as never, version: { $lt: set.version ?? 0 } },
      { $set: set },
    );
  }

  // --- Transitions --------------------------------------------------------------------------

  /**
   * Records a change and its events in one insert. False when that version of the instance is
   * taken: someone else changed it first.
   */
  async insertTransition(record: TransitionRecord, events: Envelope[]): Promise<boolean> {
    try {
      await this.models.transitions.collection.insertOne({ ...record, ...outboxFields(...events) } as never);
      return true;
    } catch (error) {
      if (isDuplicateKey(error)) return false;
      throw error;
    }
  }

  transitionsOf(changeInstanceId: number, afterVersion = 0): Promise<TransitionRecord[]> {
    return this.models.transitions
      .find({
        change_instance_id: changeInstanceId,
        ...(afterVersion > 0 ? { version: { $gt: afterVersion } } : {}),
      })
      .sort({ version: 1 })
      .lean<TransitionRecord[]>()
      .exec();
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

/** Service names are unique (an index); FerretDB does not name the key, so the error is built here. */
function duplicateName(name: string) {
  return (error: unknown): never => {
    if (isDuplicateKey(error))
      throw new ConflictError(`a Service named "${name}" already exists`, { cause: error });
    throw error;
  };
}
