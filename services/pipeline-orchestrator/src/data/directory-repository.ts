import type { Connection } from 'mongoose';
import type { LlmModelSnapshot, ServiceSnapshot } from '@pack/contracts';
import { applyVersionedSnapshot } from '@pack/db';
import type { Directory, KnownService } from '../domain/model';
import type { Projections } from '../domain/projections';

export const SERVICES_COLLECTION = 'services';
export const MODELS_COLLECTION = 'llm_models';

interface ServiceDocument {
  _id: number;
  name: string;
  owner_id: number;
  owner_name: string;
  deleted: boolean;
  version: number;
}

interface ModelDocument {
  _id: number;
  name: string;
  provider: string;
  model_name: string;
  timeout: number;
  deleted: boolean;
  version: number;
}

/**
 * The orchestrator's copies of the catalog's Services and the llm-gateway's models, kept from
 * their snapshot events (tombstones stay, so a late event cannot bring a deleted one back).
 */
export class DirectoryRepository implements Directory, Projections {
  private readonly services;
  private readonly models;

  constructor(connection: Connection) {
    this.services = connection.collection<ServiceDocument>(SERVICES_COLLECTION);
    this.models = connection.collection<ModelDocument>(MODELS_COLLECTION);
  }

  async ensureIndexes(): Promise<void> {
    await this.services.createIndex({ owner_id: 1 }, { name: 'owner' });
  }

  async applyService(snapshot: ServiceSnapshot): Promise<boolean> {
    const { service_id, owner, ...fields } = snapshot;
    return applyVersionedSnapshot(this.services, service_id, {
      ...fields,
      owner_id: owner.id,
      owner_name: owner.name,
    });
  }

  async applyModel(snapshot: LlmModelSnapshot): Promise<boolean> {
    const { llm_model_id, ...fields } = snapshot;
    return applyVersionedSnapshot(this.models, llm_model_id, fields);
  }

  async service(id: number): Promise<KnownService | null> {
    const found = await this.services.findOne({ _id: id, deleted: false });
    return found && { service_id: found._id, ...found };
  }

  async serviceIdsOwnedBy(ownerId: number): Promise<number[]> {
    const rows = await this.services
      .find({ owner_id: ownerId, deleted: false }, { projection: { _id: 1 } })
      .toArray();
    return rows.map((row) => row._id);
  }

  async modelExists(id: number): Promise<boolean> {
    return (await this.models.countDocuments({ _id: id, deleted: false }, { limit: 1 })) === 1;
  }
}
