import { carrierOf } from '@pack/tracing';
import type { ResponseRecord, Trigger, WebhookRecord } from '../model';

/** A message id fit for the webhook-id header: stable for one fire, unique across fires. */
export function fireId(webhookId: number, triggerKey: string): string {
  return `msg_${webhookId}_${triggerKey.replace(/[^A-Za-z0-9]/g, '')}`;
}

function traceOfFire(): Pick<ResponseRecord, 'trace'> {
  const trace = carrierOf();
  return trace.traceparent ? { trace } : {};
}

/** A new Webhook Response for one fire (spec 2.7): the record every delivery step moves on. */
export function newResponse(
  webhook: WebhookRecord,
  trigger: Trigger,
  id: string,
  seq: number,
  due: Date,
  lease: { token: string; until: Date } | null,
): ResponseRecord {
  const now = new Date();
  return {
    _id: id,
    webhook_id: webhook._id,
    seq,
    webhook_version: webhook.version,
    // A fire sent at once is recorded as being sent, under this replica's lease; a crash before
    // its answer is recorded leaves the lease to expire and another replica retries it.
    state: lease ? 'WAITING_FOR_RESPONSE' : 'SCHEDULED',
    mode: trigger.mode,
    change_instance_id: trigger.change_instance_id,
    body: trigger.body,
    event_at: trigger.event_at,
    due_at: due,
    lease_until: lease?.until ?? null,
    lease_token: lease?.token ?? null,
    attempt_count: 0,
    attempts: [],
    status_code: null,
    response_body: null,
    response_truncated: false,
    resend_of: trigger.resend_of ?? null,
    // The trace of the event that fired it: every attempt, retries and recovery included, joins it.
    ...traceOfFire(),
    created_at: now,
    updated_at: now,
  };
}

/** The webhook-id header of a response's attempts: a resend carries its first fire's. */
export function headerIdOf(record: ResponseRecord): string {
  return record.resend_of?.message_id ?? record._id;
}
