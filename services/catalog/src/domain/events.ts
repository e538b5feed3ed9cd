import { randomUUID } from 'node:crypto';
import {
  createEnvelope,
  events,
  type ChangeInstanceActor,
  type ChangeInstanceState,
  type Envelope,
} from '@pack/contracts';
import { currentContext } from '@pack/logging';
import type { ChangeInstanceRecord, ServiceRecord } from './model';
import type { Actor } from './transitions';

export const EVENT_SOURCE = 'catalog';

/** The Service as spec 4.1's webhook body names it. */
export interface ServiceRef {
  id: number;
  name: string;
  owner: { id: number; name: string };
}

function options(time: Date) {
  return { source: EVENT_SOURCE, correlationId: currentContext()?.correlationId ?? randomUUID(), time };
}

function common(
  instance: ChangeInstanceRecord,
  service: ServiceRef,
  declarationJson: string,
  state: ChangeInstanceState,
) {
  return {
    change_instance_id: instance._id,
    service_item_id: instance.service_item_id,
    declaration_id: instance.declaration_id,
    declaration_json: declarationJson,
    consumer_id: instance.consumer_id,
    consumer_name: instance.consumer_name,
    service,
    state,
  };
}

export function actorPayload(actor: Actor): ChangeInstanceActor {
  return actor.kind === 'user'
    ? { kind: 'user', user_id: actor.userId, username: actor.username }
    : { kind: actor.kind, user_id: null, username: null };
}

export function createdEvent(
  instance: ChangeInstanceRecord,
  service: ServiceRef,
  declarationJson: string,
  autoApproved: boolean,
  time: Date,
): Envelope {
  return createEnvelope(
    events.changeInstanceCreated,
    { ...common(instance, service, declarationJson, 'PENDING'), auto_approved: autoApproved },
    options(time),
  );
}

export function stateChangedEvent(
  instance: ChangeInstanceRecord,
  service: ServiceRef,
  declarationJson: string,
  change: {
    from: ChangeInstanceState;
    to: ChangeInstanceState;
    reasons: string[];
    actor: Actor;
    /** The approval's number, on a move to APPROVED (consumers order approvals by it). */
    approvalSeq?: number;
  },
  time: Date,
): Envelope {
  return createEnvelope(
    events.changeInstanceStateChanged,
    {
      ...common(instance, service, declarationJson, change.to),
      old_state: change.from,
      reasons: change.reasons,
      changed_by: actorPayload(change.actor),
      ...(change.approvalSeq === undefined ? {} : { approval_seq: change.approvalSeq }),
    },
    options(time),
  );
}

/** The Service's whole snapshot at `version`; `deleted` marks the tombstone of a deletion. */
export function serviceChangedEvent(service: ServiceRecord, version: number, deleted: boolean): Envelope {
  return createEnvelope(
    events.serviceChanged,
    {
      service_id: service._id,
      name: service.name,
      owner: { id: service.owner_id, name: service.owner_name },
      deleted,
      version,
    },
    options(new Date()),
  );
}
