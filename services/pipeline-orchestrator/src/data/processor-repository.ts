import type { Connection } from 'mongoose';
import type { Envelope, ProcessorKind, PageStart } from '@pack/contracts';
import {
  dropReplacedIndex,
  findPage,
  nextId,
  OUTBOX_FIELD,
  OUTBOX_PENDING_FIELD,
  outboxFields,
  withOutbox,
} from '@pack/db';
import type { ActiveProcessors } from '../domain/records/processor-records';
import type { Page, ProcessorFilter, ProcessorRecord } from '../domain/records/processor-records';
import type { ProcessorStore } from '../domain/processors/store';

export const PROCESSORS_COLLECTION = 'ai_processors';

/** Outbox fields never leave the data layer. */
const WITHOUT_OUTBOX = { [OUTBOX_FIELD]: 0, [OUTBOX_PENDING_FIELD]: 0 };

function record(document: ProcessorRecord & Record<string, unknown>): ProcessorRecord {
  const { [OUTBOX_FIELD]: _events, [OUTBOX_PENDING_FIELD]: _pending, ...fields } = document;
  return fields;
}

/**
 * Processors carry their own events (`_outbox`): a change and its event are one single-document
 * write, and the relay's `$pull` cannot undo a concurrent change (docs/decisions/0002).
 */
export class ProcessorRepository implements ProcessorStore, ActiveProcessors {
  private readonly processors;

  constructor(private readonly connection: Connection) {
    this.processors = connection.collection<ProcessorRecord>(PROCESSORS_COLLECTION);
  }

  async ensureIndexes(): Promise<void> {
    // A Service's (or an owner's) live processors, of a kind, read from the index alone
    await this.processors.createIndex(
      { service_id: 1, deleted: 1, kind: 1, _id: 1 },
      { name: 'service_kind' },
    );
    await dropReplacedIndex(this.processors, 'service_deleted');
    await this.processors.createIndex({ [OUTBOX_PENDING_FIELD]: 1 }, { name: 'outbox_pending' });
    // The list of live processors in `_id` order (docs/decisions/0033, amendment 2).
    await this.processors.createIndex({ deleted: 1, _id: 1 }, { name: 'live_by_id' });
  }

  nextId(): Promise<number> {
    return nextId(this.connection, PROCESSORS_COLLECTION);
  }

  async insert(processor: ProcessorRecord, event: Envelope): Promise<void> {
    await this.processors.insertOne({ ...processor, ...outboxFields(event) });
  }

  find(id: number): Promise<ProcessorRecord | null> {
    return this.processors.findOne({ _id: id, deleted: false }, { projection: WITHOUT_OUTBOX });
  }

  active(serviceId: number, kind: ProcessorKind): Promise<ProcessorRecord | null> {
    return this.processors.findOne(
      { service_id: serviceId, kind, active: true, deleted: false },
      { projection: WITHOUT_OUTBOX },
    );
  }

  findAny(id: number): Promise<ProcessorRecord | null> {
    return this.processors.findOne({ _id: id }, { projection: WITHOUT_OUTBOX });
  }

  list(filter: ProcessorFilter, limit: number, start: PageStart): Promise<Page<ProcessorRecord>> {
    const query: Record<string, unknown> = { deleted: false };
    const ids =
      filter.service_ids === undefined
        ? undefined
        : filter.service_id === undefined
          ? filter.service_ids
          : filter.service_ids.filter((id) => id === filter.service_id);
    if (ids !== undefined) query.service_id = { $in: [...ids] };
    else if (filter.service_id !== undefined) query.service_id = filter.service_id;
    if (filter.kind !== undefined) query.kind = filter.kind;
    return findPage(this.processors, query, {
      sort: { _id: 1 },
      limit,
      ...start,
      projection: WITHOUT_OUTBOX,
    });
  }

  async update(
    id: number,
    version: number,
    set: Partial<ProcessorRecord>,
    event: Envelope,
  ): Promise<ProcessorRecord | null> {
    // No projection: FerretDB v1 refuses one on findOneAndUpdate.
    const updated = await this.processors.findOneAndUpdate(
      { _id: id, version, deleted: false },
      withOutbox({ $set: set }, event),
      { returnDocument: 'after' },
    );
    return updated && record(updated);
  }
}
