import type { Connection } from 'mongoose';
import type { Envelope, PageStart } from '@pack/contracts';
import {
  findPage,
  isDuplicateKey,
  LARGE_BATCH,
  oneBatch,
  OUTBOX_COLLECTION,
  OUTBOX_FIELD,
  outboxFields,
  withOutbox,
} from '@pack/db';
import { ConflictError } from '@pack/errors';
import type { Page, ServiceRecord } from '../domain/model';
import { SERVICES } from './models';

/**
 * The Services collection: each change is written with its `catalog.service.changed.v1` event
 * (the outbox on the Service document), conditional on the version it was computed from.
 */
export class ServiceRepository {
  protected readonly services;

  constructor(protected readonly connection: Connection) {
    this.services = connection.collection<ServiceRecord>(SERVICES);
  }

  async insertService(record: ServiceRecord, event: Envelope): Promise<void> {
    try {
      await this.services.insertOne({ ...record, ...outboxFields(event) });
    } catch (error) {
      throw await this.nameConflict(error, record.name, record._id);
    }
  }

  findService(id: number): Promise<ServiceRecord | null> {
    return this.services.findOne({ _id: id });
  }

  async findServices(ids: readonly number[]): Promise<Map<number, ServiceRecord>> {
    if (ids.length === 0) return new Map();
    const unique = [...new Set(ids)];
    const rows = await this.services.find({ _id: { $in: unique } }, oneBatch(unique.length)).toArray();
    return new Map(rows.map((row) => [row._id, row]));
  }

  async serviceIdsOwnedBy(ownerId: number): Promise<number[]> {
    const rows = await this.services
      .find({ owner_id: ownerId }, { projection: { _id: 1 }, batchSize: LARGE_BATCH })
      .toArray();
    return rows.map((row) => row._id);
  }

  listServices(filter: { owner_id?: number }, limit: number, start: PageStart): Promise<Page<ServiceRecord>> {
    const query = filter.owner_id === undefined ? {} : { owner_id: filter.owner_id };
    return findPage(this.services, query, { sort: { _id: 1 }, limit, ...start });
  }

  /** Last writer wins between two concurrent edits of one Service (as for any PATCH of a resource). */
  async updateService(
    id: number,
    version: number,
    set: Partial<ServiceRecord>,
    event: Envelope,
  ): Promise<ServiceRecord | null> {
    // `version: null` also matches a Service stored before versions existed.
    const filter = { _id: id, version: version === 0 ? null : version };
    try {
      return await this.services.findOneAndUpdate(filter as never, withOutbox({ $set: set }, event), {
        returnDocument: 'after',
      });
    } catch (error) {
      if (set.name === undefined) throw error;
      throw await this.nameConflict(error, set.name, id);
    }
  }

  async deleteService(id: number, version: number, tombstone: Envelope): Promise<boolean> {
    const current = await this.services.findOne({ _id: id }, { projection: { [OUTBOX_FIELD]: 1 } });
    if (!current) return true;
    // Events the relay has not published yet would go with the document: they move to the
    // standalone outbox first (a copy the relay also publishes is a harmless duplicate).
    const pending = ((current as Record<string, unknown>)[OUTBOX_FIELD] as Envelope[] | undefined) ?? [];
    const standalone = this.connection.collection<{ _id: string; envelope: Envelope; created_at: Date }>(
      OUTBOX_COLLECTION,
    );
    for (const event of [...pending, tombstone]) {
      try {
        await standalone.insertOne({ _id: event.id, envelope: event, created_at: new Date() });
      } catch (error) {
        if (!isDuplicateKey(error)) throw error;
      }
    }
    const filter = { _id: id, version: version === 0 ? null : version };
    return (await this.services.deleteOne(filter as never)).deletedCount === 1;
  }

  /**
   * Service names are unique (an index). MongoDB reports a violation as 11000; FerretDB v1 does so
   * for inserts but answers an update with a generic error, so what decides is whether another
   * Service holds the name now, never the error's text. FerretDB also does not name the key.
   */
  private async nameConflict(error: unknown, name: string, id: number): Promise<unknown> {
    if (isDuplicateKey(error) || (await this.services.findOne({ name, _id: { $ne: id } })))
      return new ConflictError(`a Service named "${name}" already exists`, { cause: error });
    return error;
  }
}
