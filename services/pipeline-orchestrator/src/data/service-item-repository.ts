import type { Connection, mongo } from 'mongoose';
import { applyVersionedSnapshot, isDuplicateKey } from '@pack/db';
import {
  cancelledReason,
  type RunCancellation,
  type ServiceItemRecord,
} from '../domain/records/pipeline-records';
import type { ServiceItemStore } from '../domain/records/store';
import type { OwnerReads } from './directory-repository';

export const SERVICE_ITEMS_COLLECTION = 'service_items';
/** Change Instances the orchestrator heard were CANCELLED (docs/decisions/0055), by id. */
export const CANCELLED_COLLECTION = 'cancelled_change_instances';

interface CancelledDocument {
  _id: number;
  service_item_id: number;
  at: Date;
}

interface ServiceItemDocument {
  _id: number;
  service_id: number;
  declaration_id: number;
  declaration_json: string;
  change_instance_id?: number;
  /** The catalog's number of the approval kept (absent: an event without it, or read from the catalog). */
  approval_seq?: number;
  /** The declaration id (0: read from the catalog); orders only events that carry no approval number. */
  version: number;
}

/**
 * The stored item is older than an approval numbered `seq` of Change Instance `changeInstance`:
 * the catalog's order (decision 0005, `laterApproval`): the higher approval number, equal numbers
 * going to the later Change Instance. A document without a number (kept from an event without
 * one, or read from the catalog) is older than any numbered approval.
 */
function olderThan(seq: number, changeInstance: number): mongo.Filter<ServiceItemDocument> {
  return {
    $or: [
      { approval_seq: { $exists: false } },
      { approval_seq: { $lt: seq } },
      { approval_seq: seq, change_instance_id: { $lt: changeInstance } },
    ],
  };
}

/** The Service Items the orchestrator has seen approved, each with its latest approved declaration. */
export class ServiceItemRepository implements ServiceItemStore {
  private readonly items;
  private readonly cancelled;

  constructor(
    connection: Connection,
    private readonly owner?: Pick<OwnerReads, 'serviceItem'>,
  ) {
    this.items = connection.collection<ServiceItemDocument>(SERVICE_ITEMS_COLLECTION);
    this.cancelled = connection.collection<CancelledDocument>(CANCELLED_COLLECTION);
  }

  /**
   * Kept apart from the item: a cancellation may arrive before the approval it ends (and the
   * item's document is replaced by later approvals); keyed by the Change Instance, so a repeat
   * changes nothing.
   */
  async cancel(changeInstanceId: number, serviceItemId: number, at: Date): Promise<void> {
    try {
      await this.cancelled.updateOne(
        { _id: changeInstanceId },
        { $setOnInsert: { service_item_id: serviceItemId, at } },
        { upsert: true },
      );
    } catch (error) {
      if (!isDuplicateKey(error)) throw error;
    }
  }

  async cancellation(changeInstanceId: number): Promise<RunCancellation | null> {
    const found = await this.cancelled.findOne({ _id: changeInstanceId });
    return found && { change_instance_id: found._id, at: found.at, reason: cancelledReason(found._id) };
  }

  /**
   * Keeps the approval when it is later than the stored one, by the catalog's order (its approval
   * number), so the orchestrator's latest approved declaration is the catalog's even when an older
   * declaration was approved last or the events arrive out of order. One conditional upsert: a
   * stored later (or the same) approval makes its insert collide on `_id`, and nothing changes;
   * replays and two replicas end at the same document. An event without a number (written before
   * the catalog sent it) is ordered by declaration id among such documents only.
   */
  async applyApproved(item: ServiceItemRecord): Promise<boolean> {
    const { service_item_id, ...fields } = item;
    const seq = item.approval_seq;
    const newer: mongo.Filter<ServiceItemDocument> =
      seq === undefined || item.change_instance_id === undefined
        ? { approval_seq: { $exists: false }, version: { $lt: item.declaration_id } }
        : olderThan(seq, item.change_instance_id);
    try {
      await this.items.updateOne(
        { _id: service_item_id, ...newer },
        { $set: { ...fields, version: item.declaration_id } },
        { upsert: true },
      );
      return true;
    } catch (error) {
      if (isDuplicateKey(error)) return false;
      throw error;
    }
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
        ...(found.approval_seq === undefined ? {} : { approval_seq: found.approval_seq }),
      }
    );
  }
}
