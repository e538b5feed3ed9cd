import type { Connection } from 'mongoose';
import type { Envelope, PageStart } from '@pack/contracts';
import {
  deleteInSlices,
  findPage,
  isDuplicateKey,
  nextId,
  oneBatch,
  outboxFields,
  withOutbox,
} from '@pack/db';
import { ConflictError } from '@pack/errors';
import type { LlmModelRecord, Page, WriteOutcome } from '../domain/models/model';
import type { LlmModelStore } from '../domain/models/store';

export const LLM_MODELS_COLLECTION = 'llm_models';

/**
 * A deleted model stays as a tombstone until the relay has published its deletion (the outbox
 * lives on the document). Its name is longer than any name the API accepts (200 characters), so
 * it frees the unique name without ever colliding with one.
 */
interface StoredModel extends LlmModelRecord {
  deleted?: boolean;
}
const LIVE = { deleted: { $ne: true } } as const;
const HIDDEN = { _outbox: 0, _outbox_pending: 0, deleted: 0 } as const;
const tombstoneName = (id: number) => `deleted model ${id} `.padEnd(201, '-');

/** Every database round trip of the LLM Model profiles goes through here. */
export class LlmModelRepository implements LlmModelStore {
  private readonly models;

  /** The driver's collection: no mongoose casting or defaults, one command per call. */
  constructor(private readonly connection: Connection) {
    this.models = connection.collection<StoredModel>(LLM_MODELS_COLLECTION);
  }

  async ensureIndexes(): Promise<void> {
    await this.models.createIndex({ name: 1 }, { unique: true, name: 'name_unique' });
    await this.models.createIndex({ _outbox_pending: 1 }, { name: 'outbox_pending' });
    // The list of live models in `_id` order, its filter read from the index too (a page far into
    // a long list skips index entries only; docs/decisions/0033, amendment 2).
    await this.models.createIndex({ _id: 1, deleted: 1 }, { name: 'live_by_id' });
  }

  nextId(): Promise<number> {
    return nextId(this.connection, LLM_MODELS_COLLECTION);
  }

  async insert(record: LlmModelRecord, event: Envelope): Promise<void> {
    try {
      await this.models.insertOne({ ...record, ...outboxFields(event) });
    } catch (error) {
      throw await this.nameConflict(error, record.name, record._id);
    }
  }

  find(id: number): Promise<LlmModelRecord | null> {
    return this.models.findOne({ _id: id, ...LIVE }, { projection: HIDDEN });
  }

  list(limit: number, start: PageStart): Promise<Page<LlmModelRecord>> {
    return findPage(this.models, LIVE, { sort: { _id: 1 }, limit, ...start, projection: HIDDEN });
  }

  async update(
    id: number,
    version: number,
    set: Partial<LlmModelRecord>,
    event: Envelope,
  ): Promise<WriteOutcome<LlmModelRecord>> {
    try {
      const updated = await this.models.findOneAndUpdate(
        { _id: id, version, ...LIVE },
        withOutbox({ $set: { ...set, version: version + 1 } }, event),
        { returnDocument: 'after' },
      );
      if (updated) return { done: strip(updated) };
    } catch (error) {
      if (set.name === undefined) throw error;
      throw await this.nameConflict(error, set.name, id);
    }
    return this.missed(id);
  }

  async fallbackOf(id: number, limit: number): Promise<number[]> {
    const rows = await this.models
      .find(
        { fallback_models: id, ...LIVE },
        { projection: { _id: 1 }, sort: { _id: 1 }, limit, ...oneBatch(limit) },
      )
      .toArray();
    return rows.map((row) => row._id);
  }

  async remove(id: number, version: number, event: Envelope): Promise<WriteOutcome<true>> {
    const result = await this.models.updateOne(
      { _id: id, version, ...LIVE },
      withOutbox(
        { $set: { deleted: true, name: tombstoneName(id), version: version + 1, extra_data: {} } },
        event,
      ),
    );
    return result.matchedCount === 1 ? { done: true } : this.missed(id);
  }

  /** Drops tombstones whose deletion is published (nothing pending on them). */
  async sweepTombstones(): Promise<number> {
    return deleteInSlices(this.models, { match: { deleted: true, _outbox_pending: false }, key: '_id' });
  }

  private async missed(id: number): Promise<'gone' | 'stale'> {
    return (await this.models.findOne({ _id: id, ...LIVE }, { projection: { _id: 1 } })) ? 'stale' : 'gone';
  }

  /**
   * Names are unique (an index). FerretDB v1 answers a violating update with a generic error, so
   * what decides is whether another model holds the name now, never the error's text.
   */
  private async nameConflict(error: unknown, name: string, id: number): Promise<unknown> {
    if (isDuplicateKey(error) || (await this.models.findOne({ name, _id: { $ne: id } })))
      return new ConflictError(`an LLM model named "${name}" already exists`, { cause: error });
    return error;
  }
}

/** findOneAndUpdate cannot project on FerretDB v1: the outbox fields are removed here. */
function strip(stored: StoredModel & Record<string, unknown>): LlmModelRecord {
  const { _outbox: _events, _outbox_pending: _pending, deleted: _deleted, ...record } = stored;
  return record;
}
