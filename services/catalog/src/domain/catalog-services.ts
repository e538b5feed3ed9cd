import type { GeneralSettings, Principal } from '@pack/contracts';
import { ConflictError, ForbiddenError, NotFoundError } from '@pack/http-kit';
import type { CatalogRepository, Page } from '../data/catalog-repository';
import type { ServiceOwnerRecord, ServiceRecord } from '../data/models';
import { canChangeService, canSeeService } from './access';
import { OPEN_STATES } from './transitions';

export interface OwnerRef {
  id: number;
  name: string;
}

export interface NewService {
  name: string;
  description: string;
  auto_approval: boolean;
  owner?: OwnerRef;
}

export type ServiceChanges = Partial<NewService>;

export interface ServiceOwnerView {
  record: ServiceOwnerRecord | null;
  id: number;
  username: string | null;
  allow_service_creation: boolean;
  can_create_services: boolean;
}

/** Services and who may create them (Service Creator settings, docs/decisions/0008). */
export class ServiceCatalog {
  constructor(
    private readonly repository: CatalogRepository,
    private readonly settings: () => GeneralSettings,
  ) {}

  async create(principal: Principal, input: NewService): Promise<ServiceRecord> {
    const owner = await this.ownerForNewService(principal, input.owner);
    const now = new Date();
    const record: ServiceRecord = {
      _id: await this.repository.nextId('services'),
      name: input.name,
      description: input.description,
      owner_id: owner.id,
      owner_name: owner.name,
      auto_approval: input.auto_approval,
      created_at: now,
      updated_at: now,
    };
    await this.repository.insertService(record);
    return record;
  }

  list(principal: Principal, limit: number, offset: number): Promise<Page<ServiceRecord>> {
    return this.repository.listServices(
      principal.role === 'service_owner' ? { owner_id: principal.id } : {},
      limit,
      offset,
    );
  }

  async get(principal: Principal, id: number): Promise<ServiceRecord> {
    const service = await this.repository.findService(id);
    if (!service || !canSeeService(principal, service))
      throw new NotFoundError(`Service ${id} does not exist`);
    return service;
  }

  async update(principal: Principal, id: number, changes: ServiceChanges): Promise<ServiceRecord> {
    const service = await this.changeable(principal, id);
    if (changes.owner && principal.role !== 'admin') {
      throw new ForbiddenError('only an admin can assign a Service to another owner');
    }
    const set: Partial<ServiceRecord> = { updated_at: new Date() };
    if (changes.name !== undefined) set.name = changes.name;
    if (changes.description !== undefined) set.description = changes.description;
    if (changes.auto_approval !== undefined) set.auto_approval = changes.auto_approval;
    if (changes.owner) {
      set.owner_id = changes.owner.id;
      set.owner_name = changes.owner.name;
    }
    const updated = await this.repository.updateService(service._id, set);
    if (!updated) throw new NotFoundError(`Service ${id} does not exist`);
    return updated;
  }

  async remove(principal: Principal, id: number): Promise<void> {
    const service = await this.changeable(principal, id);
    const active = await this.repository.countChangeInstances(service._id, OPEN_STATES);
    if (active > 0) {
      throw new ConflictError(
        `Service ${id} has ${active} change instance(s) still ${OPEN_STATES.join(', ')}; ` +
          'move them to a final state (REJECTED, COMPLETED or CANCELLED) first',
      );
    }
    await this.repository.deleteService(service._id);
  }

  /** Whether an owner may create Services now; a never-seen owner shows the current default. */
  async serviceOwner(principal: Principal, id: number): Promise<ServiceOwnerView> {
    if (principal.role !== 'admin' && principal.id !== id)
      throw new NotFoundError(`service owner ${id} does not exist`);
    const record = await this.repository.findServiceOwner(id);
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

  async setServiceOwner(id: number, username: string, allow: boolean): Promise<ServiceOwnerView> {
    const record = await this.repository.putServiceOwner(id, username, allow);
    return {
      record,
      id,
      username: record.username,
      allow_service_creation: record.allow_service_creation,
      can_create_services:
        this.settings().service_creator.allow_service_creation && record.allow_service_creation,
    };
  }

  listServiceOwners(limit: number, offset: number): Promise<Page<ServiceOwnerRecord>> {
    return this.repository.listServiceOwners(limit, offset);
  }

  private async changeable(principal: Principal, id: number): Promise<ServiceRecord> {
    const service = await this.repository.findService(id);
    if (!service || !canChangeService(principal, service))
      throw new NotFoundError(`Service ${id} does not exist`);
    return service;
  }

  /**
   * An admin names the owner (or owns it themself when naming none). A service owner always owns
   * what they create, and may create only while Service Creator allows it globally and for them.
   */
  private async ownerForNewService(principal: Principal, requested: OwnerRef | undefined): Promise<OwnerRef> {
    const self = { id: principal.id, name: principal.username };
    if (principal.role === 'admin') return requested ?? self;
    if (requested && requested.id !== principal.id)
      throw new ForbiddenError('only an admin can assign a Service to another owner');
    const creator = this.settings().service_creator;
    if (!creator.allow_service_creation) {
      throw new ForbiddenError(
        'Service creation by service owners is switched off by an administrator (Service Creator settings)',
      );
    }
    const record = await this.repository.ensureServiceOwner(
      principal.id,
      principal.username,
      creator.default_allow_service_creation,
    );
    if (!record.allow_service_creation) {
      throw new ForbiddenError(
        'your account is not allowed to create Services; an administrator can allow it',
      );
    }
    return self;
  }
}
