import type { Principal, PageStart } from '@pack/contracts';
import { ConflictError, ForbiddenError, NotFoundError } from '@pack/errors';
import { canChangeService, canSeeService } from '../access';
import { serviceChangedEvent } from '../events';
import type { Page, ServiceRecord } from '../model';
import { decideUntilWritten, LOST_RACE } from '../change-instances/race-retry';
import type { ServiceOwners } from './service-owners';
import type { CatalogStore } from '../store';
import { OPEN_STATES } from '../transitions';

export interface OwnerRef {
  id: number;
  name: string;
}

export interface NewService {
  name: string;
  description: string;
  auto_approval: boolean;
  /** null or absent: the Submission Builder default decides (docs/decisions/0008). */
  allow_submit_submission_builder?: boolean | null;
  owner?: OwnerRef;
}

export type ServiceChanges = Partial<NewService>;

/** How often an update re-reads a Service that another change moved on meanwhile. */
const UPDATE_ATTEMPTS = 5;

/** Creating, reading, changing and deleting Services, each caller within their scope (access.ts). */
export class ServiceCatalog {
  constructor(
    private readonly store: CatalogStore,
    private readonly owners: ServiceOwners,
    /** Tells the outbox relay that events were written (it would find them on its sweep anyway). */
    private readonly eventsWritten: () => void = () => undefined,
  ) {}

  async create(principal: Principal, input: NewService): Promise<ServiceRecord> {
    const owner = await this.ownerForNewService(principal, input.owner);
    const now = new Date();
    const record: ServiceRecord = {
      _id: await this.store.nextId('services'),
      name: input.name,
      description: input.description,
      owner_id: owner.id,
      owner_name: owner.name,
      auto_approval: input.auto_approval,
      allow_submit_submission_builder: input.allow_submit_submission_builder ?? null,
      version: 1,
      created_at: now,
      updated_at: now,
    };
    await this.store.insertService(record, serviceChangedEvent(record, 1, false));
    this.eventsWritten();
    return record;
  }

  list(principal: Principal, limit: number, start: PageStart): Promise<Page<ServiceRecord>> {
    return this.store.listServices(
      principal.role === 'service_owner' ? { owner_id: principal.id } : {},
      limit,
      start,
    );
  }

  async get(principal: Principal, id: number): Promise<ServiceRecord> {
    const service = await this.store.findService(id);
    if (!service || !canSeeService(principal, service))
      throw new NotFoundError(`Service ${id} does not exist`);
    return service;
  }

  /**
   * A rename to a name another Service has is 409 and changes nothing. Last writer wins between
   * concurrent edits; each change is conditional on the version it read, so every change gets
   * its own version number in its event.
   */
  async update(principal: Principal, id: number, changes: ServiceChanges): Promise<ServiceRecord> {
    if (changes.owner && principal.role !== 'admin') {
      throw new ForbiddenError('only an admin can assign a Service to another owner');
    }
    return decideUntilWritten(
      async () => {
        const service = await this.changeable(principal, id);
        const version = service.version ?? 0;
        const set = { ...changedFields(changes), updated_at: new Date(), version: version + 1 };
        const event = serviceChangedEvent({ ...service, ...set }, version + 1, false);
        const updated = await this.store.updateService(service._id, version, set, event);
        if (!updated) return LOST_RACE;
        this.eventsWritten();
        return updated;
      },
      () => new ConflictError(`Service ${id} is being changed by someone else; try again`),
      UPDATE_ATTEMPTS,
    );
  }

  async remove(principal: Principal, id: number): Promise<void> {
    await decideUntilWritten(
      async () => {
        const service = await this.changeable(principal, id);
        const active = await this.store.countChangeInstances(service._id, OPEN_STATES);
        if (active > 0) {
          throw new ConflictError(
            `Service ${id} has ${active} change instance(s) still ${OPEN_STATES.join(', ')}; ` +
              'move them to a final state (REJECTED, COMPLETED or CANCELLED) first',
          );
        }
        const version = service.version ?? 0;
        const tombstone = serviceChangedEvent(service, version + 1, true);
        const deleted = await this.store.deleteService(service._id, version, tombstone);
        this.eventsWritten();
        return deleted ? true : LOST_RACE;
      },
      () => new ConflictError(`Service ${id} is being changed by someone else; try again`),
      UPDATE_ATTEMPTS,
    );
  }

  private async changeable(principal: Principal, id: number): Promise<ServiceRecord> {
    const service = await this.store.findService(id);
    if (!service || !canChangeService(principal, service))
      throw new NotFoundError(`Service ${id} does not exist`);
    return service;
  }

  /** An admin names the owner (or owns it themself when naming none); a service owner owns what they create. */
  private async ownerForNewService(principal: Principal, requested: OwnerRef | undefined): Promise<OwnerRef> {
    const self = { id: principal.id, name: principal.username };
    if (principal.role === 'admin') return requested ?? self;
    if (requested && requested.id !== principal.id)
      throw new ForbiddenError('only an admin can assign a Service to another owner');
    await this.owners.admitCreator(principal);
    return self;
  }
}

function changedFields(changes: ServiceChanges): Partial<ServiceRecord> {
  const set: Partial<ServiceRecord> = {};
  if (changes.name !== undefined) set.name = changes.name;
  if (changes.description !== undefined) set.description = changes.description;
  if (changes.auto_approval !== undefined) set.auto_approval = changes.auto_approval;
  if (changes.allow_submit_submission_builder !== undefined)
    set.allow_submit_submission_builder = changes.allow_submit_submission_builder;
  if (changes.owner) {
    set.owner_id = changes.owner.id;
    set.owner_name = changes.owner.name;
  }
  return set;
}
