import type { ChangeInstanceState, GeneralSettings, Principal } from '@pack/contracts';
import { ConflictError, ForbiddenError, NotFoundError } from '@pack/http-kit';
import type { Logger } from '@pack/logging';
import type { CatalogRepository, ChangeInstanceFilter, Page } from '../data/catalog-repository';
import type { ChangeInstanceRecord, DeclarationRecord, HistoryEntry, ServiceItemRecord } from '../data/models';
import { inItemScope, itemScope } from './access';
import { createdEvent, stateChangedEvent } from './events';
import { checkTransition, type Actor } from './transitions';

export interface Submission {
  declaration: DeclarationRecord;
  item: ServiceItemRecord;
  changeInstance: ChangeInstanceRecord;
}

export interface ChangeInstanceDetail {
  instance: ChangeInstanceRecord;
  declaration: DeclarationRecord | null;
}

export interface LatestApproved {
  item: ServiceItemRecord;
  declaration: DeclarationRecord;
}

export type DecisionOutcome = 'applied' | 'ignored';

const MAX_RACE_RETRIES = 3;

/**
 * Declarations, Service Items and Change Instances: submission, the state machine, and the
 * Service Item's pointers to its latest and latest approved declaration.
 *
 * Without transactions, a submission is a sequence of single-document writes whose commit point
 * is the insert of the Change Instance together with its events. The item's pointers are set
 * after that and the instance carries `item_sync_pending` until they are, so an interrupted
 * request is finished by the sweep (`syncPending`) instead of leaving the item stale.
 */
export class ChangeInstances {
  constructor(
    private readonly repository: CatalogRepository,
    private readonly settings: () => GeneralSettings,
    private readonly eventsWritten: () => void,
    private readonly logger: Logger,
  ) {}

  async submit(principal: Principal, serviceId: number, declaration: Record<string, unknown>): Promise<Submission> {
    if (!this.settings().submission_builder.enable_submit_functionality) {
      throw new ForbiddenError('submitting declarations is switched off by an administrator (Submission Builder settings)');
    }
    const service = await this.repository.findService(serviceId);
    if (!service) throw new NotFoundError(`Service ${serviceId} does not exist`);
    const content = JSON.stringify(declaration);
    const consumer = { id: principal.id, name: principal.username };
    const item = await this.repository.upsertServiceItem(consumer, service, () => this.repository.nextId('service_items'));
    const [declarationId, instanceId, approvalSeq] = await Promise.all([
      this.repository.nextId('declarations'),
      this.repository.nextId('change_instances'),
      service.auto_approval ? this.repository.nextId('approvals') : Promise.resolve(0),
    ]);
    const now = new Date();
    const declarationRecord: DeclarationRecord = {
      _id: declarationId,
      service_id: service._id,
      service_item_id: item._id,
      consumer_id: consumer.id,
      content,
      created_at: now,
    };
    await this.repository.insertDeclaration(declarationRecord);

    const submitted: HistoryEntry = entry(null, 'PENDING', now, { kind: 'user', userId: consumer.id, username: consumer.name }, []);
    const instance: ChangeInstanceRecord = {
      _id: instanceId,
      service_id: service._id,
      service_name: service.name,
      service_owner_id: service.owner_id,
      service_owner_name: service.owner_name,
      service_item_id: item._id,
      declaration_id: declarationId,
      consumer_id: consumer.id,
      consumer_name: consumer.name,
      state: 'PENDING',
      reasons: [],
      auto_approved: service.auto_approval,
      approval_seq: 0,
      approved_at: null,
      history: [submitted],
      item_sync_pending: true,
      created_at: now,
      updated_at: now,
    };
    const written = [createdEvent(instance, content, service.auto_approval, now)];
    if (service.auto_approval) {
      const actor: Actor = { kind: 'auto_approval' };
      written.push(stateChangedEvent(instance, content, { from: 'PENDING', to: 'APPROVED', reasons: [], actor }, now));
      Object.assign(instance, {
        state: 'APPROVED',
        approval_seq: approvalSeq,
        approved_at: now,
        history: [submitted, entry('PENDING', 'APPROVED', now, actor, [])],
      });
    }
    await this.repository.insertChangeInstance(instance, written);
    this.eventsWritten();
    await this.syncItemQuietly(instance);
    const current = (await this.repository.findServiceItem(item._id)) ?? item;
    return { declaration: declarationRecord, item: current, changeInstance: instance };
  }

  list(principal: Principal, filter: ChangeInstanceFilter, limit: number, offset: number): Promise<Page<ChangeInstanceRecord>> {
    return this.repository.listChangeInstances({ ...filter, ...itemScope(principal) }, limit, offset);
  }

  async get(principal: Principal, id: number): Promise<ChangeInstanceDetail> {
    const instance = await this.visibleInstance(principal, id);
    return { instance, declaration: await this.repository.findDeclaration(instance.declaration_id) };
  }

  listItems(principal: Principal, filter: { service_id?: number }, limit: number, offset: number): Promise<Page<ServiceItemRecord>> {
    return this.repository.listServiceItems({ ...filter, ...itemScope(principal) }, limit, offset);
  }

  async getItem(principal: Principal, id: number): Promise<ServiceItemRecord> {
    const item = await this.repository.findServiceItem(id);
    if (!item || !inItemScope(principal, item)) throw new NotFoundError(`Service Item ${id} does not exist`);
    return item;
  }

  /** What the pipeline starts from (spec 4, endpoint rule 2). */
  async latestApproved(principal: Principal, itemId: number): Promise<LatestApproved> {
    const item = await this.getItem(principal, itemId);
    const declaration =
      item.latest_approved_declaration_id === null ? null : await this.repository.findDeclaration(item.latest_approved_declaration_id);
    if (!declaration) throw new NotFoundError(`Service Item ${itemId} has no approved declaration yet`);
    return { item, declaration };
  }

  /** The Service Owner (or an admin) moves an instance. Moving to the state it is in changes nothing. */
  async move(principal: Principal, id: number, to: ChangeInstanceState, reasons: string[]): Promise<ChangeInstanceDetail> {
    let instance = await this.visibleInstance(principal, id);
    const actor: Actor = { kind: 'user', userId: principal.id, username: principal.username };
    for (let attempt = 0; ; attempt += 1) {
      if (instance.state === to) {
        return { instance, declaration: await this.repository.findDeclaration(instance.declaration_id) };
      }
      const check = checkTransition(instance.state, to, actor);
      if (!check.ok) throw new ConflictError(check.detail);
      const result = await this.apply(instance, to, reasons, actor);
      if (result) return result;
      // Someone else (another owner session, the validator) moved it first: decide again from
      // where it is now.
      const fresh = await this.repository.findChangeInstance(id);
      if (!fresh || attempt >= MAX_RACE_RETRIES) throw new ConflictError(`change instance ${id} changed meanwhile; try again`);
      instance = fresh;
    }
  }

  /** The Change Instance Validator's decision; the Service Owner's own decision wins if it came first. */
  async applyValidatorDecision(id: number, decision: 'approve' | 'reject', reasons: string[]): Promise<DecisionOutcome> {
    const to: ChangeInstanceState = decision === 'approve' ? 'APPROVED' : 'REJECTED';
    const actor: Actor = { kind: 'validator' };
    for (let attempt = 0; attempt <= MAX_RACE_RETRIES; attempt += 1) {
      const instance = await this.repository.findChangeInstance(id);
      if (!instance) {
        this.logger.warn({ change_instance_id: id }, 'validator decision for an unknown change instance ignored');
        return 'ignored';
      }
      const check = checkTransition(instance.state, to, actor);
      if (!check.ok) {
        this.logger.info({ change_instance_id: id, state: instance.state, decision }, `validator decision ignored: ${check.detail}`);
        return 'ignored';
      }
      if (await this.apply(instance, to, reasons, actor)) return 'applied';
    }
    return 'ignored';
  }

  /** Finishes the Service Item updates that interrupted requests left (run at start and on an interval). */
  async syncPending(batch = 100): Promise<number> {
    const pending = await this.repository.itemSyncsPending(batch);
    for (const instance of pending) await this.syncItem(instance);
    return pending.length;
  }

  private async visibleInstance(principal: Principal, id: number): Promise<ChangeInstanceRecord> {
    const instance = await this.repository.findChangeInstance(id);
    if (!instance || !inItemScope(principal, instance)) throw new NotFoundError(`change instance ${id} does not exist`);
    return instance;
  }

  /** One conditional write: the new state, its history entry and its event; null if the instance moved first. */
  private async apply(
    instance: ChangeInstanceRecord,
    to: ChangeInstanceState,
    reasons: string[],
    actor: Actor,
  ): Promise<ChangeInstanceDetail | null> {
    const declaration = await this.repository.findDeclaration(instance.declaration_id);
    const now = new Date();
    const set: Partial<ChangeInstanceRecord> = { state: to, reasons, updated_at: now };
    if (to === 'APPROVED') {
      set.approval_seq = await this.repository.nextId('approvals');
      set.approved_at = now;
      set.item_sync_pending = true;
    }
    const history = entry(instance.state, to, now, actor, reasons);
    const event = stateChangedEvent(instance, declaration?.content ?? '{}', { from: instance.state, to, reasons, actor }, now);
    if (!(await this.repository.transition(instance._id, instance.state, set, history, event))) return null;
    this.eventsWritten();
    const updated: ChangeInstanceRecord = { ...instance, ...set, history: [...(instance.history ?? []), history] };
    if (to === 'APPROVED') await this.syncItemQuietly(updated);
    return { instance: updated, declaration };
  }

  private async syncItem(instance: ChangeInstanceRecord): Promise<void> {
    await this.repository.raiseLatestDeclaration(instance.service_item_id, instance.declaration_id);
    if (instance.approval_seq > 0 && instance.approved_at) {
      await this.repository.markApproved(instance.service_item_id, {
        seq: instance.approval_seq,
        declarationId: instance.declaration_id,
        changeInstanceId: instance._id,
        approvedAt: instance.approved_at,
      });
    }
    await this.repository.clearItemSync(instance._id, instance.approval_seq);
  }

  /** The change is committed already; if this follow-up fails, the sweep finishes it. */
  private async syncItemQuietly(instance: ChangeInstanceRecord): Promise<void> {
    try {
      await this.syncItem(instance);
    } catch (error) {
      this.logger.warn({ err: error, change_instance_id: instance._id }, 'service item update deferred to the sweep');
    }
  }
}

function entry(
  from: ChangeInstanceState | null,
  to: ChangeInstanceState,
  at: Date,
  actor: Actor,
  reasons: string[],
): HistoryEntry {
  return {
    from,
    to,
    at,
    by_kind: actor.kind,
    by_user_id: actor.kind === 'user' ? actor.userId : null,
    by_username: actor.kind === 'user' ? actor.username : null,
    reasons,
  };
}
