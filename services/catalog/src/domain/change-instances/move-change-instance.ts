import type { ChangeInstanceState, Principal } from '@pack/contracts';
import { ConflictError, ForbiddenError } from '@pack/errors';
import type { Logger } from '@pack/logging';
import {
  visibleChangeInstance,
  type ChangeInstanceDetail,
  type LoadedChangeInstance,
} from './change-instance-queries';
import { historyOf, serviceRef, step, transitionOf } from './change-records';
import { stateChangedEvent } from '../events';
import type { ChangeInstanceRecord } from '../model';
import { currentOrIgnored, decideUntilWritten, LOST_RACE } from './race-retry';
import { viewDeferred } from './roll-forward';
import type { CatalogStore } from '../store';
import { checkTransition, type Actor } from '../transitions';
import type { ItemPointerUpdates } from './item-pointer-updates';

export type DecisionOutcome = 'applied' | 'ignored';

/**
 * Moving a Change Instance along the transition table (docs/decisions/0005): by a user (its
 * Service Owner, an admin, or the consumer withdrawing it) or by the validator.
 *
 * Every change is one insert of the transition record `<id>:<version>` carrying the change's
 * events; the unique key decides races between sessions, replicas and the validator, and the
 * insert is the commit point. Decisions are taken from the records, never from the view, which
 * is then brought up to date (docs/decisions/0007). An uncontended move costs at most six
 * commands: records, Service and declaration (in parallel), an approval number when approving,
 * the insert, the view update; an approval one more, its Service Item's pointer (0005).
 */
export class ChangeInstanceMoves {
  constructor(
    private readonly store: CatalogStore,
    private readonly eventsWritten: () => void,
    private readonly logger: Logger,
    private readonly pointers: ItemPointerUpdates,
  ) {}

  /** Moving an instance to the state it is in changes nothing (a client may repeat a lost PATCH). */
  async move(
    principal: Principal,
    id: number,
    to: ChangeInstanceState,
    reasons: string[],
  ): Promise<ChangeInstanceDetail> {
    const actor: Actor = {
      kind: 'user',
      userId: principal.id,
      username: principal.username,
      role: principal.role,
    };
    let loaded = await visibleChangeInstance(this.store, principal, id);
    return decideUntilWritten(
      async () => {
        const check = checkTransition(loaded.instance.state, to, actor);
        if (!check.ok && check.reason === 'not_allowed') throw new ForbiddenError(check.detail);
        if (loaded.instance.state === to) return loaded;
        if (!check.ok) throw new ConflictError(check.detail);
        const changed = await this.record(loaded, to, reasons, actor);
        if (changed) return changed;
        // Someone else (another session, the validator, another replica) changed it first:
        // decide again from where it is now.
        loaded = await visibleChangeInstance(this.store, principal, id);
        return LOST_RACE;
      },
      () => new ConflictError(`change instance ${id} keeps changing; try again`),
    );
  }

  /** The Change Instance Validator's decision; the Service Owner's own decision wins if it came first. */
  async applyValidatorDecision(
    id: number,
    decision: 'approve' | 'reject',
    reasons: string[],
  ): Promise<DecisionOutcome> {
    const to: ChangeInstanceState = decision === 'approve' ? 'APPROVED' : 'REJECTED';
    const actor: Actor = { kind: 'validator' };
    return decideUntilWritten<DecisionOutcome>(
      async () => {
        const current = await currentOrIgnored(this.store, this.logger, id, 'validator decision');
        if (!current) return 'ignored';
        const { instance, records } = current;
        const check = checkTransition(instance.state, to, actor);
        if (!check.ok) {
          this.logger.info(
            { change_instance_id: id, state: instance.state, decision },
            `validator decision ignored: ${check.detail}`,
          );
          return 'ignored';
        }
        const [service, declaration] = await Promise.all([
          this.store.findService(instance.service_id),
          this.store.findDeclaration(instance.declaration_id),
        ]);
        const loaded = { instance, records, service: service ?? undefined, declaration, history: [] };
        return (await this.record(loaded, to, reasons, actor)) ? 'applied' : LOST_RACE;
      },
      () => new Error(`change instance ${id} kept changing while the validator decision was applied`),
    );
  }

  /**
   * One insert: the next version of the instance with its event; then the view. Null when that
   * version is taken (someone changed the instance first); then nothing was written.
   */
  private async record(
    loaded: LoadedChangeInstance,
    to: ChangeInstanceState,
    reasons: string[],
    actor: Actor,
  ): Promise<ChangeInstanceDetail | null> {
    const { instance, service, declaration } = loaded;
    const now = new Date();
    const changed: ChangeInstanceRecord = {
      ...instance,
      state: to,
      reasons,
      updated_at: now,
      version: instance.version + 1,
    };
    if (to === 'APPROVED')
      Object.assign(changed, { approval_seq: await this.store.nextApprovalNumber(), approved_at: now });
    // The validator's decision is its outcome too (an undecided one: validation-outcomes.ts).
    if (actor.kind === 'validator')
      changed.validation = { decision: to === 'APPROVED' ? 'approve' : 'reject', reason: null, at: now };
    const record = transitionOf(changed, [step(instance.state, to, actor, reasons)], now);
    const event = stateChangedEvent(
      instance,
      serviceRef(service, instance),
      declaration?.content ?? '{}',
      {
        from: instance.state,
        to,
        reasons,
        actor,
        ...(to === 'APPROVED' && { approvalSeq: changed.approval_seq }),
      },
      now,
    );
    if (!(await this.store.insertTransition(record, [event]))) return null;
    await this.pointers.afterCommit(record);
    this.eventsWritten();
    await viewDeferred(this.logger, instance._id, () => this.store.updateChangeInstance(changed));
    return { instance: changed, service, declaration, history: historyOf([...loaded.records, record]) };
  }
}
