import type { Connection } from 'mongoose';
import type { ChangeInstanceState, Envelope } from '@pack/contracts';
import { nextId, outboxFields, withOutbox } from '@pack/db';
import { ConflictError } from '@pack/http-kit';
import type {
  CatalogModels,
  ChangeInstanceRecord,
  DeclarationRecord,
  HistoryEntry,
  ServiceItemRecord,
  ServiceOwnerRecord,
  ServiceRecord,
} from './models';

export interface Page<T> {
  count: number;
  items: T[];
}

export interface ItemFilter {
  service_owner_id?: number;
  consumer_id?: number;
  service_id?: number;
}

export interface ChangeInstanceFilter extends ItemFilter {
  service_item_id?: number;
  /** null or absent: every state. */
  states?: readonly ChangeInstanceState[] | null;
}

export interface ApprovalMark {
  seq: number;
  declarationId: number;
  changeInstanceId: number;
  approvedAt: Date;
}

type Sequence = 'services' | 'service_items' | 'declarations' | 'change_instances' | 'approvals';

/**
 * Every database round trip of the catalog goes through here. FerretDB has no transactions, so
 * each method is one single-document write (or a read); the domain orders them so that the write
 * carrying the events is the commit point.
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

  async listServices(filter: { owner_id?: number }, limit: number, offset: number): Promise<Page<ServiceRecord>> {
    const query = filter.owner_id === undefined ? {} : { owner_id: filter.owner_id };
    const [count, items] = await Promise.all([
      this.models.services.countDocuments(query),
      this.models.services.find(query).sort({ _id: 1 }).skip(offset).limit(limit).lean<ServiceRecord[]>().exec(),
    ]);
    return { count, items };
  }

  async updateService(id: number, set: Partial<ServiceRecord>): Promise<ServiceRecord | null> {
    return (await this.models.services.collection
      .findOneAndUpdate({ _id: id as never }, { $set: set }, { returnDocument: 'after' })
      .catch(duplicateName(set.name ?? ''))) as ServiceRecord | null;
  }

  /** Copies a Service's name and owner onto its items and change instances (owner-scoped lists read them). */
  async propagateService(service: ServiceRecord): Promise<void> {
    await this.models.serviceItems.collection.updateMany(
      { service_id: service._id },
      { $set: { service_name: service.name, service_owner_id: service.owner_id } },
    );
    await this.models.changeInstances.collection.updateMany(
      { service_id: service._id },
      { $set: { service_name: service.name, service_owner_id: service.owner_id, service_owner_name: service.owner_name } },
    );
  }

  async deleteService(id: number): Promise<boolean> {
    const result = await this.models.services.collection.deleteOne({ _id: id as never });
    return result.deletedCount === 1;
  }

  countChangeInstances(serviceId: number, states: readonly ChangeInstanceState[]): Promise<number> {
    return this.models.changeInstances.countDocuments({ service_id: serviceId, state: { $in: [...states] } }).exec();
  }

  // --- Service owners -----------------------------------------------------------------------

  findServiceOwner(id: number): Promise<ServiceOwnerRecord | null> {
    return this.models.serviceOwners.findById(id).lean<ServiceOwnerRecord>().exec();
  }

  /** The owner's record, created with `defaultAllow` the first time the catalog meets them. */
  async ensureServiceOwner(id: number, username: string, defaultAllow: boolean): Promise<ServiceOwnerRecord> {
    const now = new Date();
    const record = await this.models.serviceOwners.collection.findOneAndUpdate(
      { _id: id as never },
      { $setOnInsert: { username, allow_service_creation: defaultAllow, created_at: now, updated_at: now } },
      { upsert: true, returnDocument: 'after' },
    );
    if (!record) throw new Error(`service owner ${id} upsert returned nothing`);
    return record as unknown as ServiceOwnerRecord;
  }

  async putServiceOwner(id: number, username: string, allow: boolean): Promise<ServiceOwnerRecord> {
    const now = new Date();
    const record = await this.models.serviceOwners.collection.findOneAndUpdate(
      { _id: id as never },
      { $set: { username, allow_service_creation: allow, updated_at: now }, $setOnInsert: { created_at: now } },
      { upsert: true, returnDocument: 'after' },
    );
    if (!record) throw new Error(`service owner ${id} upsert returned nothing`);
    return record as unknown as ServiceOwnerRecord;
  }

  async listServiceOwners(limit: number, offset: number): Promise<Page<ServiceOwnerRecord>> {
    const [count, items] = await Promise.all([
      this.models.serviceOwners.countDocuments({}),
      this.models.serviceOwners.find({}).sort({ _id: 1 }).skip(offset).limit(limit).lean<ServiceOwnerRecord[]>().exec(),
    ]);
    return { count, items };
  }

  // --- Service Items ------------------------------------------------------------------------

  findServiceItem(id: number): Promise<ServiceItemRecord | null> {
    return this.models.serviceItems.findById(id).lean<ServiceItemRecord>().exec();
  }

  /**
   * The consumer's item for a Service, created if missing (one upsert; the unique index on
   * consumer and Service makes a concurrent second creation fail, and the retry finds the first).
   */
  async upsertServiceItem(
    consumer: { id: number; name: string },
    service: ServiceRecord,
    newId: () => Promise<number>,
  ): Promise<ServiceItemRecord> {
    const existing = await this.models.serviceItems
      .findOne({ consumer_id: consumer.id, service_id: service._id })
      .lean<ServiceItemRecord>()
      .exec();
    if (existing) return existing;
    const now = new Date();
    const id = await newId();
    for (let attempt = 0; ; attempt += 1) {
      try {
        const record = await this.models.serviceItems.collection.findOneAndUpdate(
          { consumer_id: consumer.id, service_id: service._id },
          {
            $setOnInsert: {
              _id: id,
              consumer_name: consumer.name,
              service_name: service.name,
              service_owner_id: service.owner_id,
              latest_declaration_id: null,
              latest_approved_declaration_id: null,
              latest_approved_change_instance_id: null,
              latest_approved_at: null,
              latest_approval_seq: 0,
              created_at: now,
              updated_at: now,
            },
          },
          { upsert: true, returnDocument: 'after' },
        );
        if (!record) throw new Error('service item upsert returned nothing');
        return record as unknown as ServiceItemRecord;
      } catch (error) {
        if (!isDuplicateKey(error) || attempt >= 2) throw error;
      }
    }
  }

  async listServiceItems(filter: ItemFilter, limit: number, offset: number): Promise<Page<ServiceItemRecord>> {
    const query = definedOnly(filter);
    const [count, items] = await Promise.all([
      this.models.serviceItems.countDocuments(query),
      this.models.serviceItems.find(query).sort({ _id: -1 }).skip(offset).limit(limit).lean<ServiceItemRecord[]>().exec(),
    ]);
    return { count, items };
  }

  /** Points the item at a newer declaration; an older one arriving late changes nothing. */
  async raiseLatestDeclaration(itemId: number, declarationId: number): Promise<void> {
    await this.models.serviceItems.collection.updateOne(
      { _id: itemId as never },
      { $max: { latest_declaration_id: declarationId }, $set: { updated_at: new Date() } },
    );
  }

  /** Marks an approval on the item unless a later approval is already there. */
  async markApproved(itemId: number, mark: ApprovalMark): Promise<void> {
    await this.models.serviceItems.collection.updateOne(
      { _id: itemId as never, latest_approval_seq: { $lt: mark.seq } },
      {
        $set: {
          latest_approval_seq: mark.seq,
          latest_approved_declaration_id: mark.declarationId,
          latest_approved_change_instance_id: mark.changeInstanceId,
          latest_approved_at: mark.approvedAt,
          updated_at: new Date(),
        },
      },
    );
  }

  // --- Declarations -------------------------------------------------------------------------

  async insertDeclaration(record: DeclarationRecord): Promise<void> {
    await this.models.declarations.collection.insertOne(record as never);
  }

  findDeclaration(id: number): Promise<DeclarationRecord | null> {
    return this.models.declarations.findById(id).lean<DeclarationRecord>().exec();
  }

  // --- Change Instances ---------------------------------------------------------------------

  /** The instance and its events in one insert. */
  async insertChangeInstance(record: ChangeInstanceRecord, events: Envelope[]): Promise<void> {
    await this.models.changeInstances.collection.insertOne({ ...record, ...outboxFields(...events) } as never);
  }

  findChangeInstance(id: number): Promise<ChangeInstanceRecord | null> {
    return this.models.changeInstances.findById(id).lean<ChangeInstanceRecord>().exec();
  }

  async listChangeInstances(filter: ChangeInstanceFilter, limit: number, offset: number): Promise<Page<ChangeInstanceRecord>> {
    const { states, ...rest } = filter;
    const query: Record<string, unknown> = definedOnly(rest);
    if (states) query.state = states.length === 1 ? states[0] : { $in: [...states] };
    const [count, items] = await Promise.all([
      this.models.changeInstances.countDocuments(query),
      this.models.changeInstances
        .find(query, { history: 0 })
        .sort({ _id: -1 })
        .skip(offset)
        .limit(limit)
        .lean<ChangeInstanceRecord[]>()
        .exec(),
    ]);
    return { count, items };
  }

  /**
   * Moves an instance from `from` only if it is still there, and records the event with the
   * change (one conditional single-document update). False when someone else moved it first.
   */
  async transition(
    id: number,
    from: ChangeInstanceState,
    set: Partial<ChangeInstanceRecord>,
    entry: HistoryEntry,
    event: Envelope,
  ): Promise<boolean> {
    const result = await this.models.changeInstances.collection.updateOne(
      { _id: id as never, state: from },
      withOutbox({ $set: set, $push: { history: entry } }, event),
    );
    return result.matchedCount === 1;
  }

  async clearItemSync(id: number, approvalSeq: number): Promise<void> {
    await this.models.changeInstances.collection.updateOne(
      { _id: id as never, approval_seq: approvalSeq },
      { $set: { item_sync_pending: false } },
    );
  }

  itemSyncsPending(limit: number): Promise<ChangeInstanceRecord[]> {
    return this.models.changeInstances
      .find({ item_sync_pending: true }, { history: 0 })
      .limit(limit)
      .lean<ChangeInstanceRecord[]>()
      .exec();
  }
}

/** Service names are unique (an index); FerretDB does not name the key, so the error is built here. */
function duplicateName(name: string) {
  return (error: unknown): never => {
    if (isDuplicateKey(error)) throw new ConflictError(`a Service named "${name}" already exists`, { cause: error });
    throw error;
  };
}

function isDuplicateKey(error: unknown): boolean {
  return (error as { code?: number } | null)?.code === 11000;
}

function definedOnly<T extends object>(filter: T): Record<string, unknown> {
  return Object.fromEntries(Object.entries(filter).filter(([, value]) => value !== undefined));
}
