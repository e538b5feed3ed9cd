import type { ChangeInstanceState, GeneralSettings, Principal } from '@pack/contracts';
import { ConflictError, ForbiddenError, NotFoundError } from '@pack/http-kit';
import type { Logger } from '@pack/logging';
import type {
  CatalogRepository,
  ChangeInstanceFilter,
  ItemPointers,
  Page,
  ScopeFilter,
} from '../data/catalog-repository';
import type {
  ChangeInstanceRecord,
  DeclarationRecord,
  ServiceItemRecord,
  ServiceRecord,
  TransitionRecord,
  TransitionStep,
} from '../data/models';
import { inItemScope } from './access';
import { createdEvent, stateChangedEvent, type ServiceRef } from './events';
import { checkTransition, type Actor } from './transitions';

export interface HistoryEntry extends TransitionStep {
  at: Date;
}

export interface ChangeInstanceDetail {
  instance: ChangeInstanceRecord;
  service: ServiceRecord | undefined;
  declaration: DeclarationRecord | null;
  history: HistoryEntry[];
}

export interface ItemDetail {
  item: ServiceItemRecord;
  service: ServiceRecord | undefined;
  pointers: ItemPointers;
}

export interface Submission {
  declaration: DeclarationRecord;
  item: ItemDetail;
  changeInstance: ChangeInstanceDetail;
}

export interface ListedChangeInstances extends Page<ChangeInstanceRecord> {
  services: Map<number, ServiceRecord>;
}

export interface ListedItems extends Page<ServiceItemRecord> {
  services: Map<number, ServiceRecord>;
  pointers: Map<number, ItemPointers>;
}

export type DecisionOutcome = 'applied' | 'ignored';

const MAX_RACE_RETRIES = 5;

/**
 * Declarations, Service Items and Change Instances: submission and the state machine.
 *
 * Every change of a Change Instance is one insert of a transition record `<id>:<version>` that
 * also carries the change's events (the outbox). The unique key decides races between replicas,
 * the owner and the validator; the insert is the commit point. The `change_instances` document
 * is a view rolled forward from the records: by the request right after its insert, and by
 * `rollForward` when someone finds it behind (docs/decisions/0007).
 */
export class ChangeInstances {
  constructor(
    private readonly repository: CatalogRepository,
    private readonly settings: () => GeneralSettings,
    private readonly eventsWritten: () => void,
    private readonly logger: Logger,
  ) {}

  async submit(
    principal: Principal,
    serviceId: number,
    declaration: Record<string, unknown>,
  ): Promise<Submission> {
    if (!this.settings().submission_builder.enable_submit_functionality) {
      throw new ForbiddenError(
        'submitting declarations is switched off by an administrator (Submission Builder settings)',
      );
    }
    const service = await this.repository.findService(serviceId);
    if (!service) throw new NotFoundError(`Service ${serviceId} does not exist`);
    const consumer = { id: principal.id, name: principal.username };
    const item = await this.repository.ensureServiceItem(consumer, service._id);
    const now = new Date();
    const declarationRecord: DeclarationRecord = {
      _id: await this.repository.nextId('declarations'),
      service_id: service._id,
      service_item_id: item._id,
      consumer_id: consumer.id,
      content: JSON.stringify(declaration),
      created_at: now,
    };
    await this.repository.insertDeclaration(declarationRecord);
    const [instanceId, approvalSeq] = await Promise.all([
      this.repository.nextId('change_instances'),
      service.auto_approval ? this.repository.nextId('approvals') : Promise.resolve(0),
    ]);

    const instance: ChangeInstanceRecord = {
      _id: instanceId,
      service_id: service._id,
      service_name: service.name,
      service_owner_id: service.owner_id,
      service_owner_name: service.owner_name,
      service_item_id: item._id,
      declaration_id: declarationRecord._id,
      consumer_id: consumer.id,
      consumer_name: consumer.name,
      state: 'PENDING',
      version: 1,
      reasons: [],
      auto_approved: service.auto_approval,
      approval_seq: 0,
      approved_at: null,
      created_at: now,
      updated_at: now,
    };
    const ref = serviceRef(service, instance);
    const steps: TransitionStep[] = [
      step(null, 'PENDING', { kind: 'user', userId: consumer.id, username: consumer.name }, []),
    ];
    const events = [createdEvent(instance, ref, declarationRecord.content, service.auto_approval, now)];
    if (service.auto_approval) {
      const actor: Actor = { kind: 'auto_approval' };
      steps.push(step('PENDING', 'APPROVED', actor, []));
      events.push(
        stateChangedEvent(
          instance,
          ref,
          declarationRecord.content,
          { from: 'PENDING', to: 'APPROVED', reasons: [], actor },
          now,
        ),
      );
      Object.assign(instance, { state: 'APPROVED', approval_seq: approvalSeq, approved_at: now });
    }
    const record: TransitionRecord = {
      ...transitionOf(instance, 1, steps, now),
      initial: instance,
    };
    if (!(await this.repository.insertTransition(record, events))) {
      throw new Error(`change instance ${instanceId} exists already: its id was handed out twice`);
    }
    this.eventsWritten();
    await this.quietly(instance._id, () => this.repository.insertChangeInstance(instance));
    return {
      declaration: declarationRecord,
      item: await this.itemDetail(item, service),
      changeInstance: { instance, service, declaration: declarationRecord, history: historyOf([record]) },
    };
  }

  async list(
    principal: Principal,
    filter: ChangeInstanceFilter,
    limit: number,
    offset: number,
  ): Promise<ListedChangeInstances> {
    const page = await this.repository.listChangeInstances(
      { ...filter, ...(await this.scope(principal)) },
      limit,
      offset,
    );
    return { ...page, services: await this.repository.findServices(page.items.map((ci) => ci.service_id)) };
  }

  async get(principal: Principal, id: number): Promise<ChangeInstanceDetail> {
    const { instance, service } = await this.visibleInstance(principal, id);
    return this.detail(instance, service);
  }

  async listItems(
    principal: Principal,
    filter: { service_id?: number },
    limit: number,
    offset: number,
  ): Promise<ListedItems> {
    const page = await this.repository.listServiceItems(
      { ...filter, ...(await this.scope(principal)) },
      limit,
      offset,
    );
    const ids = page.items.map((item) => item._id);
    const [services, pointers] = await Promise.all([
      this.repository.findServices(page.items.map((item) => item.service_id)),
      this.repository.itemPointers(ids),
    ]);
    return { ...page, services, pointers };
  }

  async getItem(principal: Principal, id: number): Promise<ItemDetail> {
    const item = await this.repository.findServiceItem(id);
    const service = item ? ((await this.repository.findService(item.service_id)) ?? undefined) : undefined;
    if (!item || !inItemScope(principal, item, service?.owner_id))
      throw new NotFoundError(`Service Item ${id} does not exist`);
    return this.itemDetail(item, service);
  }

  /** What the pipeline starts from (spec 4, endpoint rule 2). */
  async latestApproved(
    principal: Principal,
    itemId: number,
  ): Promise<{ detail: ItemDetail; declaration: DeclarationRecord }> {
    const detail = await this.getItem(principal, itemId);
    const id = detail.pointers.latest_approved_declaration_id;
    const declaration = id === null ? null : await this.repository.findDeclaration(id);
    if (!declaration) throw new NotFoundError(`Service Item ${itemId} has no approved declaration yet`);
    return { detail, declaration };
  }

  /** The Service Owner (or an admin) moves an instance. Moving to the state it is in changes nothing. */
  async move(
    principal: Principal,
    id: number,
    to: ChangeInstanceState,
    reasons: string[],
  ): Promise<ChangeInstanceDetail> {
    const visible = await this.visibleInstance(principal, id);
    // Decide from the latest recorded change, even if the view missed it.
    let instance = (await this.rollForward(id)) ?? visible.instance;
    const actor: Actor = { kind: 'user', userId: principal.id, username: principal.username };
    for (let attempt = 0; attempt <= MAX_RACE_RETRIES; attempt += 1) {
      if (instance.state === to) return this.detail(instance, visible.service);
      const check = checkTransition(instance.state, to, actor);
      if (!check.ok) throw new ConflictError(check.detail);
      const changed = await this.change(instance, visible.service, to, reasons, actor);
      if (changed) return this.detail(changed, visible.service);
      // Someone else (another session, the validator, another replica) changed it first:
      // decide again from where it is now.
      instance = (await this.rollForward(id)) ?? instance;
    }
    throw new ConflictError(`change instance ${id} keeps changing; try again`);
  }

  /** The Change Instance Validator's decision; the Service Owner's own decision wins if it came first. */
  async applyValidatorDecision(
    id: number,
    decision: 'approve' | 'reject',
    reasons: string[],
  ): Promise<DecisionOutcome> {
    const to: ChangeInstanceState = decision === 'approve' ? 'APPROVED' : 'REJECTED';
    const actor: Actor = { kind: 'validator' };
    for (let attempt = 0; attempt <= MAX_RACE_RETRIES; attempt += 1) {
      const instance = await this.rollForward(id);
      if (!instance) {
        this.logger.warn(
          { change_instance_id: id },
          'validator decision for an unknown change instance ignored',
        );
        return 'ignored';
      }
      const check = checkTransition(instance.state, to, actor);
      if (!check.ok) {
        this.logger.info(
          { change_instance_id: id, state: instance.state, decision },
          `validator decision ignored: ${check.detail}`,
        );
        return 'ignored';
      }
      const service = (await this.repository.findService(instance.service_id)) ?? undefined;
      if (await this.change(instance, service, to, reasons, actor)) return 'applied';
    }
    throw new Error(`change instance ${id} kept changing while the validator decision was applied`);
  }

  /**
   * Brings the view of an instance up to its latest transition (creating it if the submitting
   * request died before inserting it). Idempotent; null for an instance that does not exist.
   */
  async rollForward(id: number): Promise<ChangeInstanceRecord | null> {
    let instance = await this.repository.findChangeInstance(id);
    let pending: TransitionRecord[];
    if (instance) {
      pending = await this.repository.transitionsOf(id, instance.version);
    } else {
      const all = await this.repository.transitionsOf(id);
      const initial = all[0]?.initial;
      if (!initial) return null;
      await this.repository.insertChangeInstance(initial);
      instance = initial;
      pending = all.slice(1);
    }
    for (const record of pending) {
      const set = viewChanges(record);
      await this.repository.applyToChangeInstance(id, set);
      instance = { ...instance, ...set };
    }
    return instance;
  }

  private async scope(principal: Principal): Promise<ScopeFilter> {
    switch (principal.role) {
      case 'admin':
        return {};
      case 'consumer':
        return { consumer_id: principal.id };
      case 'service_owner':
        return { service_ids: await this.repository.serviceIdsOwnedBy(principal.id) };
    }
  }

  private async visibleInstance(
    principal: Principal,
    id: number,
  ): Promise<{ instance: ChangeInstanceRecord; service: ServiceRecord | undefined }> {
    const instance = await this.repository.findChangeInstance(id);
    const service = instance
      ? ((await this.repository.findService(instance.service_id)) ?? undefined)
      : undefined;
    if (!instance || !inItemScope(principal, instance, service?.owner_id))
      throw new NotFoundError(`change instance ${id} does not exist`);
    return { instance, service };
  }

  private async detail(
    instance: ChangeInstanceRecord,
    service: ServiceRecord | undefined,
  ): Promise<ChangeInstanceDetail> {
    const [declaration, transitions] = await Promise.all([
      this.repository.findDeclaration(instance.declaration_id),
      this.repository.transitionsOf(instance._id),
    ]);
    return { instance, service, declaration, history: historyOf(transitions) };
  }

  private async itemDetail(item: ServiceItemRecord, service: ServiceRecord | undefined): Promise<ItemDetail> {
    const pointers = (await this.repository.itemPointers([item._id])).get(item._id);
    if (!pointers) throw new Error(`no pointers for Service Item ${item._id}`);
    return { item, service, pointers };
  }

  /**
   * One insert: the next version of the instance with its event. Null when that version is
   * taken (someone changed the instance first); then nothing was written.
   */
  private async change(
    instance: ChangeInstanceRecord,
    service: ServiceRecord | undefined,
    to: ChangeInstanceState,
    reasons: string[],
    actor: Actor,
  ): Promise<ChangeInstanceRecord | null> {
    const declaration = await this.repository.findDeclaration(instance.declaration_id);
    const now = new Date();
    const changed: ChangeInstanceRecord = {
      ...instance,
      state: to,
      reasons,
      updated_at: now,
      version: instance.version + 1,
    };
    if (to === 'APPROVED')
      Object.assign(changed, { approval_seq: await this.repository.nextId('approvals'), approved_at: now });
    const record = transitionOf(changed, changed.version, [step(instance.state, to, actor, reasons)], now);
    const event = stateChangedEvent(
      instance,
      serviceRef(service, instance),
      declaration?.content ?? '{}',
      { from: instance.state, to, reasons, actor },
      now,
    );
    if (!(await this.repository.insertTransition(record, [event]))) return null;
    this.eventsWritten();
    await this.quietly(instance._id, () =>
      this.repository.applyToChangeInstance(instance._id, viewChanges(record)),
    );
    return changed;
  }

  /** The change is committed already; if updating the view fails, the next roll-forward does it. */
  private async quietly(id: number, work: () => Promise<unknown>): Promise<void> {
    try {
      await work();
    } catch (error) {
      this.logger.warn(
        { err: error, change_instance_id: id },
        'change instance view update deferred to the roll-forward',
      );
    }
  }
}

/** The Service for an event: as it is now, or as it was at submission if it has been deleted since. */
function serviceRef(service: ServiceRecord | undefined, instance: ChangeInstanceRecord): ServiceRef {
  return service
    ? { id: service._id, name: service.name, owner: { id: service.owner_id, name: service.owner_name } }
    : {
        id: instance.service_id,
        name: instance.service_name,
        owner: { id: instance.service_owner_id, name: instance.service_owner_name },
      };
}

function step(
  from: ChangeInstanceState | null,
  to: ChangeInstanceState,
  actor: Actor,
  reasons: string[],
): TransitionStep {
  return {
    from,
    to,
    by_kind: actor.kind,
    by_user_id: actor.kind === 'user' ? actor.userId : null,
    by_username: actor.kind === 'user' ? actor.username : null,
    reasons,
  };
}

function transitionOf(
  instance: ChangeInstanceRecord,
  version: number,
  steps: TransitionStep[],
  now: Date,
): TransitionRecord {
  const approved = steps.some((s) => s.to === 'APPROVED');
  return {
    _id: `${instance._id}:${version}`,
    change_instance_id: instance._id,
    version,
    service_id: instance.service_id,
    service_item_id: instance.service_item_id,
    declaration_id: instance.declaration_id,
    steps,
    state: instance.state,
    reasons: instance.reasons,
    approval_seq: approved ? instance.approval_seq : 0,
    approved_at: approved ? instance.approved_at : null,
    initial: null,
    created_at: now,
  };
}

/** What a transition changes in the view (absolute values, so applying it twice is harmless). */
function viewChanges(record: TransitionRecord): Partial<ChangeInstanceRecord> {
  return {
    state: record.state,
    version: record.version,
    reasons: record.reasons,
    updated_at: record.created_at,
    ...(record.approval_seq > 0
      ? { approval_seq: record.approval_seq, approved_at: record.approved_at }
      : {}),
  };
}

function historyOf(records: TransitionRecord[]): HistoryEntry[] {
  return records.flatMap((record) => record.steps.map((s) => ({ ...s, at: record.created_at })));
}
