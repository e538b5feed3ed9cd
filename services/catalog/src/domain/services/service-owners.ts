import type { GeneralSettings, Principal, PageStart } from '@pack/contracts';
import { ForbiddenError, NotFoundError } from '@pack/errors';
import type { Page, ServiceOwnerRecord } from '../model';
import type { CatalogStore } from '../store';

export interface ServiceOwnerView {
  record: ServiceOwnerRecord | null;
  id: number;
  username: string | null;
  allow_service_creation: boolean;
  can_create_services: boolean;
}

/** Who may create Services (Service Creator settings, docs/decisions/0008). */
export class ServiceOwners {
  constructor(
    private readonly store: CatalogStore,
    private readonly settings: () => GeneralSettings,
  ) {}

  /** Whether an owner may create Services now; a never-seen owner shows the current default. */
  async get(principal: Principal, id: number): Promise<ServiceOwnerView> {
    if (principal.role !== 'admin' && principal.id !== id)
      throw new NotFoundError(`service owner ${id} does not exist`);
    const record = await this.store.findServiceOwner(id);
    const creator = this.settings().service_creator;
    const allow = record ? record.allow_service_creation : creator.default_allow_service_creation;
    return {
      record,
      id,
      username: record?.username ?? (principal.id === id ? principal.username : null),
      allow_service_creation: allow,
      can_create_services: creator.allow_service_creation && allow,
    };
  }

  async set(id: number, username: string, allow: boolean): Promise<ServiceOwnerView> {
    const record = await this.store.putServiceOwner(id, username, allow);
    return {
      record,
      id,
      username: record.username,
      allow_service_creation: record.allow_service_creation,
      can_create_services:
        this.settings().service_creator.allow_service_creation && record.allow_service_creation,
    };
  }

  list(limit: number, start: PageStart): Promise<Page<ServiceOwnerRecord>> {
    return this.store.listServiceOwners(limit, start);
  }

  /**
   * A service owner may create Services only while Service Creator allows it globally and for
   * them; the first time the catalog meets them, they get the default of that moment.
   */
  async admitCreator(principal: Principal): Promise<void> {
    const creator = this.settings().service_creator;
    if (!creator.allow_service_creation) {
      throw new ForbiddenError(
        'Service creation by service owners is switched off by an administrator (Service Creator settings)',
      );
    }
    const record = await this.store.ensureServiceOwner(
      principal.id,
      principal.username,
      creator.default_allow_service_creation,
    );
    if (!record.allow_service_creation) {
      throw new ForbiddenError(
        'your account is not allowed to create Services; an administrator can allow it',
      );
    }
  }
}
