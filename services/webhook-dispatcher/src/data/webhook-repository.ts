import type { Connection } from 'mongoose';
import { serviceProjectionOf, type ServiceSnapshot, type PageStart } from '@pack/contracts';
import { applyVersionedSnapshot, deleteInSlices, findPage, LARGE_BATCH, nextId } from '@pack/db';
import { emptySchedule } from '../domain/firing/firing-rules';
import type { Page, ScheduleRecord, ServiceRecord, WebhookRecord } from '../domain/model';
import type { ServiceStore, WebhookStore } from '../domain/webhooks/store';
import { RESPONSES, SCHEDULES } from './response-repository';

export const WEBHOOKS = 'webhooks';
export const SERVICES = 'services';

/** Webhooks, and the Services projection they are scoped by. */
export class WebhookRepository implements WebhookStore {
  private readonly webhooks;
  private readonly services;
  private readonly schedules;

  constructor(private readonly connection: Connection) {
    this.webhooks = connection.collection<WebhookRecord>(WEBHOOKS);
    this.services = connection.collection<ServiceRecord>(SERVICES);
    this.schedules = connection.collection<ScheduleRecord>(SCHEDULES);
  }

  async ensureIndexes(): Promise<void> {
    await this.webhooks.createIndex({ service_id: 1 }, { name: 'service' });
    await this.webhooks.createIndex({ owner_id: 1, _id: 1 }, { name: 'owner' });
  }

  nextId(): Promise<number> {
    return nextId(this.connection, WEBHOOKS);
  }

  async insert(record: WebhookRecord): Promise<void> {
    await this.schedules.insertOne(emptySchedule(record._id));
    await this.webhooks.insertOne(record);
  }

  find(id: number): Promise<WebhookRecord | null> {
    return this.webhooks.findOne({ _id: id });
  }

  list(ownerId: number | null, limit: number, start: PageStart): Promise<Page<WebhookRecord>> {
    return findPage(this.webhooks, ownerId === null ? {} : { owner_id: ownerId }, {
      sort: { _id: 1 },
      limit,
      ...start,
    });
  }

  update(id: number, set: Partial<WebhookRecord>): Promise<WebhookRecord | null> {
    return this.webhooks.findOneAndUpdate(
      { _id: id },
      { $set: set, $inc: { version: 1 } },
      { returnDocument: 'after' },
    );
  }

  updateIf(id: number, version: number, set: Partial<WebhookRecord>): Promise<WebhookRecord | null> {
    return this.webhooks.findOneAndUpdate(
      { _id: id, version },
      { $set: set, $inc: { version: 1 } },
      { returnDocument: 'after' },
    );
  }

  async remove(id: number): Promise<boolean> {
    const removed = (await this.webhooks.deleteOne({ _id: id })).deletedCount === 1;
    await this.schedules.deleteOne({ _id: id });
    // In slices by seq (deleteInSlices): a busy webhook may have kept more than 65,535.
    await deleteInSlices(this.connection.collection(RESPONSES), { match: { webhook_id: id }, key: 'seq' });
    return removed;
  }

  enabledFor(serviceId: number): Promise<WebhookRecord[]> {
    return this.webhooks.find({ service_id: serviceId, enabled: true }, { batchSize: LARGE_BATCH }).toArray();
  }

  async idsOwnedBy(ownerId: number): Promise<number[]> {
    const owned = await this.webhooks
      .find({ owner_id: ownerId }, { projection: { _id: 1 }, batchSize: LARGE_BATCH })
      .toArray();
    return owned.map((webhook) => webhook._id);
  }

  async disableForService(serviceId: number, reason: string): Promise<number> {
    const result = await this.webhooks.updateMany(
      { service_id: serviceId, enabled: true },
      { $set: { enabled: false, disabled_reason: reason, updated_at: new Date() }, $inc: { version: 1 } },
    );
    return result.modifiedCount;
  }

  async reassign(serviceId: number, owner: { id: number; name: string }): Promise<number> {
    const updated_at = new Date();
    const moved = await this.webhooks.updateMany(
      { service_id: serviceId, owner_id: { $ne: owner.id } },
      {
        $set: { owner_id: owner.id, owner_name: owner.name, authorization: '', updated_at },
        $inc: { version: 1 },
      },
    );
    const renamed = await this.webhooks.updateMany(
      { service_id: serviceId, owner_id: owner.id, owner_name: { $ne: owner.name } },
      { $set: { owner_name: owner.name, updated_at }, $inc: { version: 1 } },
    );
    return moved.modifiedCount + renamed.modifiedCount;
  }

  findService(id: number): Promise<ServiceRecord | null> {
    return this.services.findOne({ _id: id });
  }

  async serviceNames(ids: number[]): Promise<Map<number, string>> {
    const found = await this.services.find({ _id: { $in: ids } }, { projection: { name: 1 } }).toArray();
    return new Map(found.map((service) => [service._id, service.name]));
  }

  /** A newer snapshot only: a stale or redelivered event changes nothing (applyVersionedSnapshot). */
  apply(record: ServiceRecord): Promise<boolean> {
    const { _id, ...fields } = record;
    return applyVersionedSnapshot(this.services, _id, fields);
  }
}

/**
 * The same repository seen as the Services store (find means a Service there). A Service the
 * projection does not hold at all is asked of the catalog (`fromCatalog`: a webhook
 * created just after its Service) and kept at version 0, so the catalog's own events (versions
 * from 1) replace it and a tombstone stays one.
 */
export function serviceStoreOf(
  repository: WebhookRepository,
  fromCatalog?: (id: number) => Promise<Omit<ServiceSnapshot, 'version'> | null>,
): ServiceStore {
  return {
    async find(id) {
      const found = await repository.findService(id);
      if (found || !fromCatalog) return found;
      const fetched = await fromCatalog(id);
      if (!fetched) return null;
      await repository.apply(serviceProjectionOf({ ...fetched, version: 0 }));
      return repository.findService(id);
    },
    names: (ids) => repository.serviceNames(ids),
    apply: (record) => repository.apply(record),
  };
}
