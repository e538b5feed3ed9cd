import type { Connection } from 'mongoose';
import { findPage, isDuplicateKey, nextId } from '@pack/db';
import { ConflictError } from '@pack/errors';
import type { LlmModelRecord, LlmModelStore, Page } from '../domain/model';

export const LLM_MODELS_COLLECTION = 'llm_models';

/** Every database round trip of the LLM Model profiles goes through here. */
export class LlmModelRepository implements LlmModelStore {
  private readonly models;

  /** The driver's collection: no mongoose casting or defaults, one command per call. */
  constructor(private readonly connection: Connection) {
    this.models = connection.collection<LlmModelRecord>(LLM_MODELS_COLLECTION);
  }

  async ensureIndexes(): Promise<void> {
    await this.models.createIndex({ name: 1 }, { unique: true, name: 'name_unique' });
  }

  nextId(): Promise<number> {
    return nextId(this.connection, LLM_MODELS_COLLECTION);
  }

  async insert(record: LlmModelRecord): Promise<void> {
    try {
      await this.models.insertOne(record);
    } catch (error) {
      throw await this.nameConflict(error, record.name, record._id);
    }
  }

  find(id: number): Promise<LlmModelRecord | null> {
    return this.models.findOne({ _id: id });
  }

  list(limit: number, offset: number): Promise<Page<LlmModelRecord>> {
    return findPage(this.models, {}, { sort: { _id: 1 }, limit, offset });
  }

  async update(id: number, set: Partial<LlmModelRecord>): Promise<LlmModelRecord | null> {
    try {
      return await this.models.findOneAndUpdate({ _id: id }, { $set: set }, { returnDocument: 'after' });
    } catch (error) {
      if (set.name === undefined) throw error;
      throw await this.nameConflict(error, set.name, id);
    }
  }

  async remove(id: number): Promise<boolean> {
    return (await this.models.deleteOne({ _id: id })).deletedCount === 1;
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
