import type { ChangeInstanceState, Envelope } from '@pack/contracts';
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

export type Sequence = 'services' | 'service_items' | 'declarations' | 'change_instances';

/**
 * Everything the catalog's use cases need from storage; data/catalog-repository.ts implements
 * it. Races are decided by unique inserts (ids, Service Items, transition records), never by
 * conditional updates, because FerretDB v1 updates are read-then-write (docs/decisions/0007).
 */
export interface CatalogStore {
  /** A new integer id, unique across replicas. */
  nextId(sequence: Sequence): Promise<number>;
  /** The next approval number: increasing, one command, not guaranteed unique (see 0007). */
  nextApprovalNumber(): Promise<number>;

  /** ConflictError when the name is taken. The event is recorded by the same insert. */
  insertService(record: ServiceRecord, event: Envelope): Promise<void>;
  findService(id: number): Promise<ServiceRecord | null>;
  findServices(ids: readonly number[]): Promise<Map<number, ServiceRecord>>;
  serviceIdsOwnedBy(ownerId: number): Promise<number[]>;
  listServices(filter: { owner_id?: number }, limit: number, offset: number): Promise<Page<ServiceRecord>>;
  /**
   * The Service after the change; null when it is gone; ConflictError when the new name is taken.
   * The event is recorded by the same update.
   */
  updateService(id: number, set: Partial<ServiceRecord>, event: Envelope): Promise<ServiceRecord | null>;
  /** Deletes, then records the event in the outbox collection (a crash between loses only the event). */
  deleteService(id: number, event: Envelope): Promise<void>;
  countChangeInstances(serviceId: number, states: readonly ChangeInstanceState[]): Promise<number>;

  findServiceOwner(id: number): Promise<ServiceOwnerRecord | null>;
  /** The owner's record, created with `defaultAllow` the first time the catalog meets them. */
  ensureServiceOwner(id: number, username: string, defaultAllow: boolean): Promise<ServiceOwnerRecord>;
  putServiceOwner(id: number, username: string, allow: boolean): Promise<ServiceOwnerRecord>;
  listServiceOwners(limit: number, offset: number): Promise<Page<ServiceOwnerRecord>>;

  findServiceItem(id: number): Promise<ServiceItemRecord | null>;
  /** The consumer's item for a Service, created if missing (`created` tells which). */
  ensureServiceItem(
    consumer: { id: number; name: string },
    serviceId: number,
  ): Promise<{ item: ServiceItemRecord; created: boolean }>;
  /** Removes an item no transition refers to (its first submission failed); keeps it otherwise. */
  removeUnusedServiceItem(item: ServiceItemRecord): Promise<void>;
  listServiceItems(filter: ScopeFilter, limit: number, offset: number): Promise<Page<ServiceItemRecord>>;
  /** The submissions (version-1 records) and approvals of these Service Items. */
  itemTransitions(itemIds: readonly number[]): Promise<ItemTransitions>;

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
    offset: number,
  ): Promise<Page<ChangeInstanceRecord>>;
}
