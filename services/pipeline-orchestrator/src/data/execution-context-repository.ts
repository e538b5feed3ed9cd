import type { Connection } from 'mongoose';
import { TimedCache } from '@pack/cache';
import type { Page, PageStart } from '@pack/contracts';
import { findPage, isDuplicateKey, oneBatch, OUTBOX_FIELD, OUTBOX_PENDING_FIELD } from '@pack/db';
import type { ExecutionContextStore, ExecutionNote } from '../domain/pipelines/store';
import type { PipelineRecord } from '../domain/records/pipeline-records';
import type { OptimizerNoteFilter, OptimizerNoteStore } from '../domain/side-processors/store';
import { PIPELINES_COLLECTION } from './pipeline-repository';
import { MODELS_COLLECTION } from './directory-repository';

export const EXECUTION_NOTES_COLLECTION = 'execution_notes';

/** Notes by id (a repeat collides and is dropped); earlier runs read from the pipelines themselves. */
export class ExecutionContextRepository implements ExecutionContextStore, OptimizerNoteStore {
  private readonly notesCollection;
  private readonly pipelines;
  private readonly models;
  /**
   * Model names as the projection holds them, kept `modelNameTtlMs` (a new run's context budget
   * reads one per run): forgotten when this replica applies the model's snapshot; another
   * replica's copy follows within the time kept. A model the projection lacks is not kept.
   */
  private readonly modelNames: TimedCache<number, string | null>;

  constructor(connection: Connection, modelNameTtlMs = 0) {
    this.modelNames = new TimedCache(modelNameTtlMs);
    this.notesCollection = connection.collection<ExecutionNote>(EXECUTION_NOTES_COLLECTION);
    this.pipelines = connection.collection<PipelineRecord>(PIPELINES_COLLECTION);
    this.models = connection.collection<{ _id: number; model_name?: string }>(MODELS_COLLECTION);
  }

  async ensureIndexes(): Promise<void> {
    await this.notesCollection.createIndex({ service_item_id: 1, created_at: -1 }, { name: 'item_created' });
    // A Service's optimizer notes, newest first: top-level equalities and a sort FerretDB pushes down (0033).
    await this.notesCollection.createIndex(
      { service_id: 1, kind: 1, created_at: -1, _id: -1 },
      { name: 'service_kind_created' },
    );
  }

  optimizerNotes(filter: OptimizerNoteFilter, limit: number, start: PageStart): Promise<Page<ExecutionNote>> {
    const query: Record<string, unknown> = { service_id: filter.service_id, kind: 'optimizer' };
    if (filter.processor_id !== undefined) query.processor_id = filter.processor_id;
    if (filter.service_item_id !== undefined) query.service_item_id = filter.service_item_id;
    return findPage(this.notesCollection, query, { sort: { created_at: -1, _id: -1 }, limit, ...start });
  }

  async addNote(note: ExecutionNote): Promise<void> {
    try {
      await this.notesCollection.insertOne(note);
    } catch (error) {
      if (!isDuplicateKey(error)) throw error;
    }
  }

  notes(serviceItemId: number, limit: number): Promise<ExecutionNote[]> {
    return this.notesCollection
      .find({ service_item_id: serviceItemId }, oneBatch(limit))
      .sort({ created_at: -1 })
      .limit(limit)
      .toArray();
  }

  recentRuns(serviceItemId: number, limit: number): Promise<PipelineRecord[]> {
    return this.pipelines
      .find(
        { service_item_id: serviceItemId },
        { projection: { [OUTBOX_FIELD]: 0, [OUTBOX_PENDING_FIELD]: 0 }, ...oneBatch(limit) },
      )
      .sort({ run: -1 })
      .limit(limit)
      .toArray();
  }

  async modelName(modelId: number): Promise<string | null> {
    const name = await this.modelNames.get(modelId, async () => {
      const found = await this.models.findOne({ _id: modelId }, { projection: { model_name: 1 } });
      return found?.model_name ?? null;
    });
    if (name === null) this.modelNames.forget(modelId);
    return name;
  }

  /** The projection changed the model: its name is read again. */
  forgetModel(modelId: number): void {
    this.modelNames.forget(modelId);
  }
}
