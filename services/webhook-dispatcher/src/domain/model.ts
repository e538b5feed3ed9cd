import type { TraceCarrier } from '@pack/tracing';
import type {
  ChangeInstanceState,
  FireMode,
  ServiceProjection,
  WebhookBody,
  WebhookResponseState,
} from '@pack/contracts';

/** A webhook as stored: authorization and secret hold ciphertext bound to the webhook. */
export interface WebhookRecord {
  _id: number;
  name: string;
  description: string;
  service_id: number;
  owner_id: number;
  owner_name: string;
  target_url: string;
  authorization: string;
  secret: string;
  change_instance_state: ChangeInstanceState | null;
  trigger_wait_time: number;
  trigger_cooling_time: number;
  enabled: boolean;
  disabled_reason: string | null;
  /** When the signing secret was last rotated (absent: never); guards against racing rotations. */
  secret_rotated_at?: Date | null;
  /** Increased by every change, so a cached copy can tell it is stale. */
  version: number;
  created_at: Date;
  updated_at: Date;
}

/** What the dispatcher knows of a catalog Service, from catalog.service.changed events. */
export type ServiceRecord = ServiceProjection;

/**
 * The per-webhook firing state, shared by every replica and changed only by conditional
 * single-document updates: the response numbering, the open wait window, the cooling time and
 * the rate-limit window the next fire counts in. Times are epoch milliseconds.
 */
export interface ScheduleRecord {
  _id: number;
  seq: number;
  /** Triggers before this merge into `window_fire`. */
  window_end: number;
  window_fire: string | null;
  /** Triggers before this (and after window_end) are suppressed: the cooling time. */
  block_until: number;
  /** The rate window being filled (index of a WEBHOOK_RATE_WINDOW_MS slot) and its count. */
  rate_slot: number;
  rate_count: number;
  suppressed: number;
}

export interface AttemptRecord {
  at: Date;
  status_code: number | null;
  error: string | null;
  duration_ms: number;
}

/** One fire of a webhook (spec 2.7). `_id` is also the webhook-id header, stable across retries. */
export interface ResponseRecord {
  _id: string;
  webhook_id: number;
  /** Numbered per webhook in firing order; the public id of the response. */
  seq: number;
  webhook_version: number;
  state: WebhookResponseState;
  mode: FireMode;
  change_instance_id: number | null;
  body: WebhookBody;
  /** When the triggering event happened: the latest one wins a merge; latency counts from it. */
  event_at: Date;
  due_at: Date;
  lease_until: Date | null;
  lease_token: string | null;
  attempt_count: number;
  attempts: AttemptRecord[];
  status_code: number | null;
  response_body: string | null;
  response_truncated: boolean;
  /** Why the fire has no answer of the target (never sent, refused, no reply); absent on older records. */
  error?: string | null;
  /** A resend of another response; null or absent for a fire. */
  resend_of?: ResendOf | null;
  /** The trace context of the event that fired it (absent when tracing is off); never shown. */
  trace?: TraceCarrier;
  created_at: Date;
  updated_at: Date;
}

export type { Page } from '@pack/contracts';

/** A trigger as the firing rules see it, whatever its source. */
export interface Trigger {
  /** Unique per source event and webhook: a redelivered event finds its own fire. */
  key: string;
  mode: FireMode;
  body: WebhookBody;
  change_instance_id: number | null;
  event_at: Date;
  /** Set when the trigger resends a recorded response. */
  resend_of?: ResendOf | null;
}

/** What a resend points back to. */
export interface ResendOf {
  /** The `seq` of the response resent. */
  seq: number;
  /** The webhook-id header: the first fire's `_id`, the same through resends of resends. */
  message_id: string;
  recovery_id: string | null;
}

/** A recovery: resends every FAILED fire of a webhook in a window, oldest first. */
export interface RecoveryRecord {
  _id: string;
  webhook_id: number;
  /**
   * Unique: `webhook:<id>` while RUNNING (at most one per webhook), the recovery's own id after,
   * so no partial index is needed (FerretDB v1 has none).
   */
  running_key: string;
  state: 'RUNNING' | 'DONE' | 'CANCELLED';
  since: Date;
  /** The end of the window: the one asked for, or the time of the call. */
  until: Date;
  /** The end asked for (null: none); the same window asked again while it runs is this recovery. */
  until_asked: Date | null;
  total: number;
  resent: number;
  /** The `seq` of the last response handled: the next batch starts after it. */
  cursor: number;
  reason: string | null;
  lease_until: Date | null;
  lease_token: string | null;
  /** Who holds the lease (host:pid), for operators. */
  holder: string | null;
  created_by: number;
  created_at: Date;
  updated_at: Date;
  finished_at: Date | null;
}
