import type { Connection } from 'mongoose';
import type { ProcessorSnapshot } from '@pack/contracts';
import { applyVersionedSnapshot } from '@pack/db';
import type { ModelUsageStore } from '../domain/model-usage';

export const PROCESSOR_MODELS_COLLECTION = 'processor_models';

interface ProcessorModelDocument {
  _id: number;
  service_id: number;
  kind: string;
  llm_model_id: number;
  active: boolean;
  deleted: boolean;
  version: number;
  updated_at: Date;
}

/** The processor -> model projection: one document per processor, deleted ones kept as tombstones. */
export class ModelUsageRepository implements ModelUsageStore {
  private readonly processors;

  constructor(connection: Connection) {
    this.processors = connection.collection<ProcessorModelDocument>(PROCESSOR_MODELS_COLLECTION);
  }

  async ensureIndexes(): Promise<void> {
    await this.processors.createIndex({ llm_model_id: 1, active: 1 }, { name: 'model_active' });
  }

  /** Applied unless the same or a newer version of the processor is stored (applyVersionedSnapshot). */
  async apply(snapshot: ProcessorSnapshot): Promise<void> {
    const { processor_id, ...fields } = snapshot;
    await applyVersionedSnapshot(this.processors, processor_id, { ...fields, updated_at: new Date() });
  }

  async activeProcessorsUsing(modelId: number, limit: number): Promise<number[]> {
    const found = await this.processors
      .find({ llm_model_id: modelId, active: true, deleted: false }, { projection: { _id: 1 } })
      .sort({ _id: 1 })
      .limit(limit)
      .toArray();
    return found.map((document) => document._id);
  }
}
