import type { Connection } from 'mongoose';
import { applyVersionedSnapshot } from '@pack/db';
import type { ServiceItemRecord, ServiceItemStore } from '../domain/pipelines/pipeline-records';

export const SERVICE_ITEMS_COLLECTION = 'service_items';

interface ServiceItemDocument {
  _id: number;
  service_id: number;
  declaration_id: number;
  declaration_json: string;
  change_instance_id?: number;
  /** The declaration id: a later declaration of the item has a greater one. */
  version: number;
}

/** The Service Items the orchestrator has seen approved, each with its latest approved declaration. */
export class ServiceItemRepository implements ServiceItemStore {
  private readonly items;

  constructor(connection: Connection) {
    this.items = connection.collection<ServiceItemDocument>(SERVICE_ITEMS_COLLECTION);
  }

  applyApproved(item: ServiceItemRecord): Promise<boolean> {
    const { service_item_id, ...fields } = item;
    return applyVersionedSnapshot(this.items, service_item_id, { ...fields, version: item.declaration_id });
  }

  async find(serviceItemId: number): Promise<ServiceItemRecord | null> {
    const found = await this.items.findOne({ _id: serviceItemId });
    return (
      found && {
        service_item_id: found._id,
        service_id: found.service_id,
        declaration_id: found.declaration_id,
        declaration_json: found.declaration_json,
        ...(found.change_instance_id === undefined ? {} : { change_instance_id: found.change_instance_id }),
      }
    );
  }
}
