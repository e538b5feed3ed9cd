import type { Connection } from 'mongoose';
import type { ProcessorSnapshot, ServiceSnapshot } from '@pack/contracts';
import { applyVersionedSnapshot, LARGE_BATCH, oneBatch } from '@pack/db';
import type { ModelUsageStore, OwnedProcessors } from '../domain/models/store';

export const PROCESSOR_MODELS_COLLECTION = 'processor_models';
export const SERVICE_OWNERS_COLLECTION = 'service_owners';

interface ServiceOwnerDocument {
  _id: number;
  owner_id: number;
  deleted: boolean;
  version: number;
  updated_at: Date;
}

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

/**
 * The processor -> model and Service -> owner projections: one document per processor and per
 * Service, deleted ones kept as tombstones.
 */
export class ModelUsageRepository implements ModelUsageStore, OwnedProcessors {
  private readonly processors;
  private readonly services;

  constructor(connection: Connection) {
    this.processors = connection.collection<ProcessorModelDocument>(PROCESSOR_MODELS_COLLECTION);
    this.services = connection.collection<ServiceOwnerDocument>(SERVICE_OWNERS_COLLECTION);
  }

  async ensureIndexes(): Promise<void> {
    await this.processors.createIndex({ llm_model_id: 1, active: 1 }, { name: 'model_active' });
    await this.processors.createIndex({ service_id: 1 }, { name: 'service' });
    await this.services.createIndex({ owner_id: 1 }, { name: 'owner' });
  }

  async applyService(snapshot: ServiceSnapshot): Promise<void> {
    await applyVersionedSnapshot(this.services, snapshot.service_id, {
      owner_id: snapshot.owner.id,
      deleted: snapshot.deleted,
      version: snapshot.version,
      updated_at: new Date(),
    });
  }

  async processorsOwnedBy(ownerId: number): Promise<number[]> {
    const services = await this.services
      .find({ owner_id: ownerId, deleted: false }, { projection: { _id: 1 }, batchSize: LARGE_BATCH })
      .toArray();
    if (services.length === 0) return [];
    const processors = await this.processors
      .find(
        { service_id: { $in: services.map((service) => service._id) } },
        { projection: { _id: 1 }, batchSize: LARGE_BATCH },
      )
      .toArray();
    return processors.map((document) => document._id);
  }

  /** Applied unless the same or a newer version of the processor is stored (applyVersionedSnapshot). */
  async apply(snapshot: ProcessorSnapshot): Promise<void> {
    const { processor_id, ...fields } = snapshot;
    await applyVersionedSnapshot(this.processors, processor_id, { ...fields, updated_at: new Date() });
  }

  async activeProcessorsUsing(modelId: number, limit: number): Promise<number[]> {
    const found = await this.processors
      .find(
        { llm_model_id: modelId, active: true, deleted: false },
        { projection: { _id: 1 }, ...oneBatch(limit) },
      )
      .sort({ _id: 1 })
      .limit(limit)
      .toArray();
    return found.map((document) => document._id);
  }
}
