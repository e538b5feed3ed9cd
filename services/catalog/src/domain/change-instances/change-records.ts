import type { ChangeInstanceState } from '@pack/contracts';
import type { ServiceRef } from '../events';
import type { ChangeInstanceRecord, ServiceRecord, TransitionRecord, TransitionStep } from '../model';
import type { Actor } from '../transitions';

/**
 * Pure rules of the transition records (docs/decisions/0007): how a change is recorded and how
 * the current state of an instance follows from its records.
 */

export interface HistoryEntry extends TransitionStep {
  at: Date;
}

/**
 * The instance as its records say: the version-1 record holds it as created, every later record
 * the fields it changed. Null without a version-1 record (no such instance).
 */
export function currentInstance(records: readonly TransitionRecord[]): ChangeInstanceRecord | null {
  const initial = records[0]?.version === 1 ? records[0].initial : null;
  if (!initial) return null;
  let instance = initial;
  for (const record of records.slice(1)) instance = { ...instance, ...viewChanges(record) };
  return instance;
}

/** What a transition changes in the view (absolute values, so applying it twice is harmless). */
export function viewChanges(record: TransitionRecord): Partial<ChangeInstanceRecord> {
  return {
    state: record.state,
    version: record.version,
    reasons: record.reasons,
    updated_at: record.created_at,
    ...(record.pipeline_progress === undefined ? {} : { pipeline_progress: record.pipeline_progress }),
    ...(record.validation === undefined ? {} : { validation: record.validation }),
    ...(record.approval_seq > 0
      ? { approval_seq: record.approval_seq, approved_at: record.approved_at }
      : {}),
  };
}

export function historyOf(records: readonly TransitionRecord[]): HistoryEntry[] {
  return records.flatMap((record) => record.steps.map((s) => ({ ...s, at: record.created_at })));
}

export function step(
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

/** The record of `instance` as it is after the change `steps` (version 1: the submission). */
export function transitionOf(
  instance: ChangeInstanceRecord,
  steps: TransitionStep[],
  now: Date,
): TransitionRecord {
  const approved = steps.some((s) => s.to === 'APPROVED');
  return {
    _id: `${instance._id}:${instance.version}`,
    change_instance_id: instance._id,
    version: instance.version,
    service_id: instance.service_id,
    service_item_id: instance.service_item_id,
    declaration_id: instance.declaration_id,
    steps,
    state: instance.state,
    reasons: instance.reasons,
    approval_seq: approved ? instance.approval_seq : 0,
    approved_at: approved ? instance.approved_at : null,
    ...(instance.pipeline_progress === undefined ? {} : { pipeline_progress: instance.pipeline_progress }),
    ...(instance.validation === undefined ? {} : { validation: instance.validation }),
    initial: instance.version === 1 ? instance : null,
    created_at: now,
  };
}

/** The Service for an event: as it is now, or as it was at submission if it has been deleted since. */
export function serviceRef(service: ServiceRecord | undefined, instance: ChangeInstanceRecord): ServiceRef {
  return service
    ? { id: service._id, name: service.name, owner: { id: service.owner_id, name: service.owner_name } }
    : {
        id: instance.service_id,
        name: instance.service_name,
        owner: { id: instance.service_owner_id, name: instance.service_owner_name },
      };
}
