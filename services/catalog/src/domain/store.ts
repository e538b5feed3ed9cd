import type { ChangeInstanceState, Envelope, PageStart } from '@pack/contracts';
import type {
  ChangeInstanceFilter,
  ChangeInstanceRecord,
  DeclarationRecord,
  Page,
  ScopeFilter,
  ServiceItemRecord,
  ServiceOwnerRecord,
  ServiceRecord,
  TransitionRecord,
} from './model';

export type ItemTransition = Pick<
  TransitionRecord,
  'service_item_id' | 'declaration_id' | 'change_instance_id' | 'approval_seq' | 'approved_at' | 'created_at'
>;

export interface ItemTransitions {
  submissions: ItemTransition[];
  approvals: ItemTransition[];
}

/** What one change moves forward on its Service Item, each part only if newer (decision 0005). */
export interface PointerHeads {
  submission?: { declaration_id: number; submitted_at: Date };
  approval?: {
    approval_seq: number;
    change_instance_id: number;
    declaration_id: number;
    approved_at: Date | null;
  };
}

export type Sequence = 'services' | 'service_items' | 'declarations' | 'change_instances';

/**
 * Everything the catalog's use cases need from storage; data/catalog-repository.ts implements
 * it. Changes are decided by unique inserts (ids, Service Items, transition records,
 * docs/decisions/0007); derived values (the view, an item's pointers) follow them with
 * conditional updates that only move forward (atomic on MongoDB and our FerretDB build, 0002).
 */
export interface CatalogStore {
  /** A new integer id, unique across replicas. */
  nextId(sequence: Sequence): Promise<number>;
  /** The next approval number: increasing, one command, not guaranteed unique (see 0007). */
  nextApprovalNumber(): Promise<number>;

  /** Inserts a Service with its `changed` event (outbox); ConflictError when the name is taken. */
  insertService(record: ServiceRecord, event: Envelope): Promise<void>;
  findService(id: number): Promise<ServiceRecord | null>;
  findServices(ids: readonly number[]): Promise<Map<number, ServiceRecord>>;
  serviceIdsOwnedBy(ownerId: number): Promise<number[]>;
  listServices(filter: { owner_id?: number }, limit: number, start: PageStart): Promise<Page<ServiceRecord>>;
  /**
   * Applies `set` and records `event` in the same write, only while the Service is still at
   * `version` (absent counts as 0). The Service after the change; null when it is gone or another
   * change came first; ConflictError when the new name is taken.
   */
  updateService(
    id: number,
    version: number,
    set: Partial<ServiceRecord>,
    event: Envelope,
  ): Promise<ServiceRecord | null>;
  /**
   * Records the tombstone event (and moves the Service's unpublished events to the standalone
   * outbox), then deletes the Service if it is still at `version`. False when another change
   * came first: the caller re-reads and tries again with a newer tombstone. A crash between the
   * two publishes a tombstone for a Service that still exists; deleting it again finishes the
   * job (0022).
   */
  deleteService(id: number, version: number, tombstone: Envelope): Promise<boolean>;
  countChangeInstances(serviceId: number, states: readonly ChangeInstanceState[]): Promise<number>;

  findServiceOwner(id: number): Promise<ServiceOwnerRecord | null>;
  /** The owner's record, created with `defaultAllow` the first time the catalog meets them. */
  ensureServiceOwner(id: number, username: string, defaultAllow: boolean): Promise<ServiceOwnerRecord>;
  putServiceOwner(id: number, username: string, allow: boolean): Promise<ServiceOwnerRecord>;
  listServiceOwners(limit: number, start: PageStart): Promise<Page<ServiceOwnerRecord>>;

  findServiceItem(id: number): Promise<ServiceItemRecord | null>;
  /** The consumer's item for a Service, created if missing (`created` tells which). */
  ensureServiceItem(
    consumer: { id: number; name: string },
    serviceId: number,
  ): Promise<{ item: ServiceItemRecord; created: boolean }>;
  /**
   * Removes an item no transition refers to (its first submission failed); keeps it otherwise.
   * True when it was removed and put back because a concurrent submission used it meanwhile.
   */
  removeUnusedServiceItem(item: ServiceItemRecord): Promise<boolean>;
  listServiceItems(filter: ScopeFilter, limit: number, start: PageStart): Promise<Page<ServiceItemRecord>>;
  /** The submissions (version-1 records) and approvals of these Service Items (their history). */
  itemTransitions(itemIds: readonly number[]): Promise<ItemTransitions>;
  /**
   * Moves the item's pointers to `heads` where these are later in decision 0005's order:
   * conditional single-document updates, idempotent and order-independent.
   */
  advanceItemPointers(itemId: number, heads: PointerHeads): Promise<void>;
  /** Up to `limit` items stored before their pointers were kept (no `pointers_version`). */
  itemsWithoutPointers(limit: number): Promise<number[]>;
  /** Marks items whose pointers are now kept on them. */
  markItemPointers(itemIds: readonly number[]): Promise<void>;

  insertDeclaration(record: DeclarationRecord): Promise<void>;
  findDeclaration(id: number): Promise<DeclarationRecord | null>;

  /** Records a change with its events in one insert; false when that version is taken already. */
  insertTransition(record: TransitionRecord, events: Envelope[]): Promise<boolean>;
  /** Every recorded change of an instance, oldest first. */
  transitionsOf(changeInstanceId: number): Promise<TransitionRecord[]>;

  findChangeInstance(id: number): Promise<ChangeInstanceRecord | null>;
  /** Inserts the view of a new instance; false if it is there already. */
  insertChangeInstance(record: ChangeInstanceRecord): Promise<boolean>;
  /** Brings an existing view up to `instance`; leaves a view at that version or newer alone. */
  updateChangeInstance(instance: ChangeInstanceRecord): Promise<void>;
  listChangeInstances(
    filter: ChangeInstanceFilter,
    limit: number,
    start: PageStart,
  ): Promise<Page<ChangeInstanceRecord>>;
}
