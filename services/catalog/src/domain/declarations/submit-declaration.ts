import { stringifyExactJson, type GeneralSettings, type Principal } from '@pack/contracts';
import { ForbiddenError, NotFoundError, ValidationError } from '@pack/errors';
import type { Logger } from '@pack/logging';
import { waitFor } from '@pack/reliability';
import {
  itemDetail,
  type ChangeInstanceDetail,
  type ItemDetail,
} from '../change-instances/change-instance-queries';
import { historyOf, serviceRef, step, transitionOf } from '../change-instances/change-records';
import { createdEvent, stateChangedEvent } from '../events';
import type { ChangeInstanceRecord, DeclarationRecord, ServiceItemRecord, ServiceRecord } from '../model';
import { viewDeferred } from '../change-instances/roll-forward';
import type { ItemPointerUpdates } from '../change-instances/item-pointer-updates';
import type { CatalogStore } from '../store';
import type { Actor } from '../transitions';

export interface Submission {
  declaration: DeclarationRecord;
  item: ItemDetail;
  changeInstance: ChangeInstanceDetail;
}

/**
 * A consumer submits a declaration for a Service: their Service Item (created at the first
 * submission), the declaration and a PENDING Change Instance, approved in the same record when
 * the Service auto-approves (docs/decisions/0005).
 *
 * Nothing is half done: the declaration is serialized before anything is written, and a Service
 * Item this request created is removed again if the change cannot be recorded.
 */
export class SubmitDeclaration {
  constructor(
    private readonly store: CatalogStore,
    private readonly settings: () => GeneralSettings,
    private readonly eventsWritten: () => void,
    private readonly logger: Logger,
    private readonly pointers: ItemPointerUpdates,
  ) {}

  async submit(
    principal: Principal,
    serviceId: number,
    declaration: Record<string, unknown>,
  ): Promise<Submission> {
    const builder = this.settings().submission_builder;
    if (!builder.enable_submit_functionality) {
      throw new ForbiddenError(
        'submitting declarations is switched off by an administrator ' +
          '(submission_builder.enable_submit_functionality), through the builder and the API alike',
      );
    }
    const service = await this.store.findService(serviceId);
    if (!service) throw new NotFoundError(`Service ${serviceId} does not exist`);
    const own = service.allow_submit_submission_builder ?? null;
    if (!(own ?? builder.default_allow_submit_submission_builder)) {
      throw new ForbiddenError(
        own === false
          ? `Service ${serviceId} does not take submissions from the submission builder; its owner switched them off`
          : `Service ${serviceId} does not take submissions from the submission builder: it sets nothing, ` +
              'and the Submission Builder default (default_allow_submit_submission_builder) is off',
      );
    }
    const content = serialize(declaration);
    const consumer = { id: principal.id, name: principal.username };
    const { item, created } = await this.store.ensureServiceItem(consumer, service._id);
    let submission: Omit<Submission, 'item'>;
    try {
      submission = await this.record(service, item, consumer, content);
    } catch (error) {
      if (created) await this.removeItem(item);
      throw error;
    }
    // Past the commit point a failed read must not answer 503 for a submission that happened
    // (the client would submit again): it is read again while the database comes back.
    const stored = () => this.store.findServiceItem(item._id);
    return { ...submission, item: itemDetail((await afterCommit(stored)) ?? item, service) };
  }

  private async record(
    service: ServiceRecord,
    item: ServiceItemRecord,
    consumer: { id: number; name: string },
    content: string,
  ): Promise<Omit<Submission, 'item'>> {
    const now = new Date();
    const [declarationId, instanceId, approvalSeq] = await Promise.all([
      this.store.nextId('declarations'),
      this.store.nextId('change_instances'),
      service.auto_approval ? this.store.nextApprovalNumber() : Promise.resolve(0),
    ]);
    const declaration: DeclarationRecord = {
      _id: declarationId,
      service_id: service._id,
      service_item_id: item._id,
      consumer_id: consumer.id,
      content,
      created_at: now,
    };
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
      version: 1,
      reasons: [],
      auto_approved: service.auto_approval,
      approval_seq: 0,
      approved_at: null,
      created_at: now,
      updated_at: now,
    };
    const ref = serviceRef(service, instance);
    const submitter: Actor = { kind: 'user', userId: consumer.id, username: consumer.name, role: 'consumer' };
    const steps = [step(null, 'PENDING', submitter, [])];
    const events = [createdEvent(instance, ref, content, service.auto_approval, now)];
    if (service.auto_approval) {
      const actor: Actor = { kind: 'auto_approval' };
      steps.push(step('PENDING', 'APPROVED', actor, []));
      events.push(
        stateChangedEvent(
          instance,
          ref,
          content,
          { from: 'PENDING', to: 'APPROVED', reasons: [], actor, approvalSeq },
          now,
        ),
      );
      Object.assign(instance, { state: 'APPROVED', approval_seq: approvalSeq, approved_at: now });
    }
    const record = transitionOf(instance, steps, now);
    // An orphan declaration is invisible (only records lead to it); the record is the commit point.
    await this.store.insertDeclaration(declaration);
    if (!(await this.store.insertTransition(record, events))) {
      throw new Error(`change instance ${instanceId} exists already: its id was handed out twice`);
    }
    await this.pointers.afterCommit(record);
    this.eventsWritten();
    await viewDeferred(this.logger, instanceId, () => this.store.insertChangeInstance(instance));
    return { declaration, changeInstance: { instance, service, declaration, history: historyOf([record]) } };
  }

  private async removeItem(item: ServiceItemRecord): Promise<void> {
    try {
      // Put back for a concurrent submission: its pointer update may have missed the item.
      if (await this.store.removeUnusedServiceItem(item)) await this.pointers.recompute(item._id);
    } catch (error) {
      this.logger.warn(
        { err: error, service_item_id: item._id },
        'Service Item of a failed submission left behind',
      );
    }
  }
}

/** How long a read after the commit point is tried again (within the gateway's 30 s upstream timeout). */
const AFTER_COMMIT_MS = 20_000;

/** Runs a read after a change was committed again every 500 ms until it succeeds, for AFTER_COMMIT_MS. */
async function afterCommit<T>(read: () => Promise<T>): Promise<T> {
  return waitFor(read, { baseDelayMs: 500, maxDelayMs: 500, maxMs: AFTER_COMMIT_MS });
}

/**
 * Declarations are stored as JSON text, numbers digit for digit as sent (exact-json.ts); one too
 * deep for that is refused before anything is written.
 */
function serialize(declaration: Record<string, unknown>): string {
  try {
    return stringifyExactJson(declaration);
  } catch (error) {
    if (!(error instanceof RangeError)) throw error;
    throw new ValidationError('the declaration cannot be stored', {
      errors: { declaration: ['nested too deeply to store'] },
      cause: error,
    });
  }
}
