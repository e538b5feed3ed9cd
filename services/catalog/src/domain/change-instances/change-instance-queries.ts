import type { Principal, PageStart } from '@pack/contracts';
import { NotFoundError } from '@pack/errors';
import { inItemScope } from '../access';
import { currentInstance, historyOf, type HistoryEntry } from './change-records';
import { storedPointers } from './item-pointers';
import type {
  ChangeInstanceFilter,
  ChangeInstanceRecord,
  DeclarationRecord,
  ItemPointers,
  Page,
  ScopeFilter,
  ServiceItemRecord,
  ServiceRecord,
  TransitionRecord,
} from '../model';
import type { CatalogStore } from '../store';

export interface ChangeInstanceDetail {
  instance: ChangeInstanceRecord;
  service: ServiceRecord | undefined;
  declaration: DeclarationRecord | null;
  history: HistoryEntry[];
}

export interface LoadedChangeInstance extends ChangeInstanceDetail {
  records: TransitionRecord[];
}

export interface ItemDetail {
  item: ServiceItemRecord;
  service: ServiceRecord | undefined;
  pointers: ItemPointers;
}

export interface ListedChangeInstances extends Page<ChangeInstanceRecord> {
  services: Map<number, ServiceRecord>;
}

export interface ListedItems extends Page<ServiceItemRecord> {
  services: Map<number, ServiceRecord>;
  pointers: Map<number, ItemPointers>;
}

/**
 * A change instance as its transition records say (never behind, unlike the view), with its
 * Service as it is now and its declaration: three reads. 404 unless the caller may see it, so
 * existence does not leak.
 */
export async function visibleChangeInstance(
  store: CatalogStore,
  principal: Principal,
  id: number,
): Promise<LoadedChangeInstance> {
  const records = await store.transitionsOf(id);
  const instance = currentInstance(records);
  const [service, declaration] = instance
    ? await Promise.all([
        store.findService(instance.service_id),
        store.findDeclaration(instance.declaration_id),
      ])
    : [null, null];
  if (!instance || !inItemScope(principal, instance, service?.owner_id))
    throw new NotFoundError(`change instance ${id} does not exist`);
  return { instance, records, service: service ?? undefined, declaration, history: historyOf(records) };
}

/** Reading Change Instances and Service Items, each caller within their scope (access.ts). */
export class ChangeInstanceQueries {
  constructor(private readonly store: CatalogStore) {}

  async list(
    principal: Principal,
    filter: ChangeInstanceFilter,
    limit: number,
    start: PageStart,
  ): Promise<ListedChangeInstances> {
    const page = await this.store.listChangeInstances(
      { ...filter, ...(await this.scope(principal)) },
      limit,
      start,
    );
    return { ...page, services: await this.store.findServices(page.items.map((ci) => ci.service_id)) };
  }

  /** As the view shows it, like the lists (the view may be a moment behind the records). */
  async get(principal: Principal, id: number): Promise<ChangeInstanceDetail> {
    const instance = await this.store.findChangeInstance(id);
    const [service, declaration, records] = instance
      ? await Promise.all([
          this.store.findService(instance.service_id),
          this.store.findDeclaration(instance.declaration_id),
          this.store.transitionsOf(id),
        ])
      : [null, null, []];
    if (!instance || !inItemScope(principal, instance, service?.owner_id))
      throw new NotFoundError(`change instance ${id} does not exist`);
    return { instance, service: service ?? undefined, declaration, history: historyOf(records) };
  }

  async listItems(
    principal: Principal,
    filter: { service_id?: number },
    limit: number,
    start: PageStart,
  ): Promise<ListedItems> {
    const page = await this.store.listServiceItems(
      { ...filter, ...(await this.scope(principal)) },
      limit,
      start,
    );
    // The pointers are on the items (decision 0005, amendment): no read of their history.
    const services = await this.store.findServices(page.items.map((item) => item.service_id));
    const pointers = new Map(page.items.map((item) => [item._id, storedPointers(item)]));
    return { ...page, services, pointers };
  }

  async getItem(principal: Principal, id: number): Promise<ItemDetail> {
    const item = await this.store.findServiceItem(id);
    const service = item ? ((await this.store.findService(item.service_id)) ?? undefined) : undefined;
    if (!item || !inItemScope(principal, item, service?.owner_id))
      throw new NotFoundError(`Service Item ${id} does not exist`);
    return itemDetail(item, service);
  }

  /** What the pipeline starts from (spec 4, endpoint rule 2). */
  async latestApproved(
    principal: Principal,
    itemId: number,
  ): Promise<{ detail: ItemDetail; declaration: DeclarationRecord }> {
    const detail = await this.getItem(principal, itemId);
    const id = detail.pointers.latest_approved_declaration_id;
    const declaration = id === null ? null : await this.store.findDeclaration(id);
    if (!declaration) throw new NotFoundError(`Service Item ${itemId} has no approved declaration yet`);
    return { detail, declaration };
  }

  private async scope(principal: Principal): Promise<ScopeFilter> {
    switch (principal.role) {
      case 'admin':
        return {};
      case 'consumer':
        return { consumer_id: principal.id };
      case 'service_owner':
        return { service_ids: await this.store.serviceIdsOwnedBy(principal.id) };
    }
  }
}

export function itemDetail(item: ServiceItemRecord, service: ServiceRecord | undefined): ItemDetail {
  return { item, service, pointers: storedPointers(item) };
}
