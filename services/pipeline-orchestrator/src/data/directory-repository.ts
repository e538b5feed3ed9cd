import type { Connection } from 'mongoose';
import {
  serviceProjectionOf,
  type LlmModelSnapshot,
  type ServiceProjection,
  type ServiceSnapshot,
} from '@pack/contracts';
import { applyVersionedSnapshot, LARGE_BATCH } from '@pack/db';
import type { ServiceItemRecord } from '../domain/records/pipeline-records';
import type { KnownService } from '../domain/records/processor-records';
import type { DirectoryStore } from '../domain/records/store';
import type { ProjectionStore } from '../domain/processors/store';

export const SERVICES_COLLECTION = 'services';
export const MODELS_COLLECTION = 'llm_models';

interface ModelDocument {
  _id: number;
  name: string;
  provider: string;
  model_name: string;
  timeout: number;
  /** The stuck-stage deadline covers the fallbacks' calls too. */
  fallback_models?: number[];
  deleted: boolean;
  version: number;
}

/**
 * Reads of a record the projection has not received yet, from the service that owns it (the
 * catalog's Service and Service Item, the llm-gateway's model); null when the owner has none.
 */
export interface OwnerReads {
  service(id: number): Promise<Omit<ServiceSnapshot, 'version'> | null>;
  model(id: number): Promise<Omit<LlmModelSnapshot, 'version'> | null>;
  /** The item with its latest approved declaration; null before any approval (or no such item). */
  serviceItem(id: number): Promise<ServiceItemRecord | null>;
}

/**
 * The orchestrator's copies of the catalog's Services and the llm-gateway's models, kept from
 * their snapshot events (tombstones stay, so a late event cannot bring a deleted one back).
 * A record the copies do not hold at all is asked of its owner (`owners`) and kept at version 0,
 * so the owner's own events (versions from 1) replace it and a tombstone stays one.
 */
export class DirectoryRepository implements DirectoryStore, ProjectionStore {
  private readonly services;
  private readonly models;

  constructor(
    connection: Connection,
    private readonly owners?: OwnerReads,
  ) {
    this.services = connection.collection<ServiceProjection>(SERVICES_COLLECTION);
    this.models = connection.collection<ModelDocument>(MODELS_COLLECTION);
  }

  async ensureIndexes(): Promise<void> {
    await this.services.createIndex({ owner_id: 1 }, { name: 'owner' });
  }

  async applyService(snapshot: ServiceSnapshot): Promise<boolean> {
    const { _id, ...fields } = serviceProjectionOf(snapshot);
    return applyVersionedSnapshot(this.services, _id, fields);
  }

  async applyModel(snapshot: LlmModelSnapshot): Promise<boolean> {
    const { llm_model_id, ...fields } = snapshot;
    return applyVersionedSnapshot(this.models, llm_model_id, fields);
  }

  async service(id: number): Promise<KnownService | null> {
    let found = await this.services.findOne({ _id: id });
    if (!found && this.owners) {
      const fetched = await this.owners.service(id);
      if (!fetched) return null;
      await this.applyService({ ...fetched, version: 0 });
      found = await this.services.findOne({ _id: id });
    }
    return found && !found.deleted ? { service_id: found._id, ...found } : null;
  }

  async serviceIdsOwnedBy(ownerId: number): Promise<number[]> {
    const rows = await this.services
      .find({ owner_id: ownerId, deleted: false }, { projection: { _id: 1 }, batchSize: LARGE_BATCH })
      .toArray();
    return rows.map((row) => row._id);
  }

  async modelExists(id: number): Promise<boolean> {
    let found = await this.models.findOne({ _id: id }, { projection: { deleted: 1 } });
    if (!found && this.owners) {
      const fetched = await this.owners.model(id);
      if (!fetched) return false;
      await this.applyModel({ ...fetched, version: 0 });
      found = await this.models.findOne({ _id: id }, { projection: { deleted: 1 } });
    }
    return found !== null && !found.deleted;
  }
}
