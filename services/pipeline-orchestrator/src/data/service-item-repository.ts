import type { Connection } from 'mongoose';
import { applyVersionedSnapshot } from '@pack/db';
import type { ServiceItemRecord } from '../domain/records/pipeline-records';
import type { ServiceItemStore } from '../domain/records/store';
import type { OwnerReads } from './directory-repository';

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

  constructor(
    connection: Connection,
    private readonly owner?: Pick<OwnerReads, 'serviceItem'>,
  ) {
    this.items = connection.collection<ServiceItemDocument>(SERVICE_ITEMS_COLLECTION);
  }

  applyApproved(item: ServiceItemRecord): Promise<boolean> {
    const { service_item_id, ...fields } = item;
    return applyVersionedSnapshot(this.items, service_item_id, { ...fields, version: item.declaration_id });
  }

  /**
   * The item as the approval events left it; one they have not brought yet is asked of the catalog
   * and kept at version 0, so the events (the declaration id as version) replace it (0032).
   */
  async find(serviceItemId: number): Promise<ServiceItemRecord | null> {
    let found = await this.items.findOne({ _id: serviceItemId });
    if (!found && this.owner) {
      const fetched = await this.owner.serviceItem(serviceItemId);
      if (!fetched) return null;
      const { service_item_id, ...fields } = fetched;
      await applyVersionedSnapshot(this.items, service_item_id, { ...fields, version: 0 });
      found = await this.items.findOne({ _id: serviceItemId });
    }
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
