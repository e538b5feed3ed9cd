import type { WebhookResponseState } from '@pack/contracts';
import type {
  AttemptRecord,
  Page,
  RecoveryRecord,
  ResponseRecord,
  ScheduleRecord,
  ServiceRecord,
  Trigger,
  WebhookRecord,
} from '../model';
import type { FirePlan } from '../firing/firing-rules';

export interface ResponseFilter {
  webhookIds: number[] | null;
  state?: WebhookResponseState;
  /** true: only resends; false: only first fires. */
  resend?: boolean;
}

/** The FAILED first fires of a webhook created in [since, until] (a recovery's window). */
export interface FailedWindow {
  webhookId: number;
  since: Date;
  until: Date;
}

/** Everything the use cases need from storage; src/data implements it. */
export interface WebhookStore {
  nextId(): Promise<number>;
  /** Inserts the webhook and its empty schedule. */
  insert(record: WebhookRecord): Promise<void>;
  find(id: number): Promise<WebhookRecord | null>;
  list(ownerId: number | null, limit: number, offset: number): Promise<Page<WebhookRecord>>;
  /** The webhook after the change (its version increased); null when it is gone. */
  update(id: number, set: Partial<WebhookRecord>): Promise<WebhookRecord | null>;
  /** The same, only if the stored version is still `version`; null otherwise (or when it is gone). */
  updateIf(id: number, version: number, set: Partial<WebhookRecord>): Promise<WebhookRecord | null>;
  /** Removes the webhook, its schedule and its responses; false when there was none. */
  remove(id: number): Promise<boolean>;
  /** The enabled webhooks of a Service (cached per replica by WebhookLookup, 0031). */
  enabledFor(serviceId: number): Promise<WebhookRecord[]>;
  /** The ids of an owner's webhooks. */
  idsOwnedBy(ownerId: number): Promise<number[]>;
  /** Disables the Service's enabled webhooks with `reason` (the Service was deleted); how many changed. */
  disableForService(serviceId: number, reason: string): Promise<number>;
  /**
   * Gives the Service's webhooks to its new owner, clearing their authorization (it was the old
   * owner's, given for a URL the new owner may change; 0014); a rename of the owner only renames.
   * How many changed.
   */
  reassign(serviceId: number, owner: { id: number; name: string }): Promise<number>;
}

export interface ServiceStore {
  find(id: number): Promise<ServiceRecord | null>;
  /** Keeps the record unless one of a higher version is stored already; true when it was applied. */
  apply(record: ServiceRecord): Promise<boolean>;
}

export interface ScheduleStore {
  read(webhookId: number): Promise<ScheduleRecord | null>;
  /** Applies the plan and numbers the fire, if the schedule still meets its expectation; else null. */
  tryFire(webhookId: number, plan: FirePlan): Promise<ScheduleRecord | null>;
  countSuppressed(webhookId: number): Promise<void>;
}

export interface ResponseStore {
  /** False when a response with this id exists already (the trigger was handled before). */
  insert(record: ResponseRecord): Promise<boolean>;
  /** The same for several, in one command: one flag per record. */
  insertMany(records: ResponseRecord[]): Promise<boolean[]>;
  /**
   * Puts a later trigger's body into a fire that has not been sent yet; the response after it,
   * or null when the fire is gone, sent, or holds a later trigger already (then it is unchanged).
   */
  merge(id: string, trigger: Trigger): Promise<ResponseRecord | null>;
  find(id: string): Promise<ResponseRecord | null>;
  findBySeq(webhookId: number, seq: number): Promise<ResponseRecord | null>;
  /** Newest first. */
  list(
    webhookId: number,
    limit: number,
    offset: number,
    filter?: Omit<ResponseFilter, 'webhookIds'>,
  ): Promise<Page<ResponseRecord>>;
  /** How many FAILED first fires (not resends) are in the window. */
  countFailed(window: FailedWindow): Promise<number>;
  /** The next FAILED first fires in the window after `afterSeq`, oldest (lowest seq) first. */
  failedAfter(window: FailedWindow, afterSeq: number, limit: number): Promise<ResponseRecord[]>;
  /** Newest first across webhooks (all of them for null). */
  listAcross(filter: ResponseFilter, limit: number, offset: number): Promise<Page<ResponseRecord>>;
  /** Takes one due SCHEDULED fire, or one whose lease expired mid-delivery, under a new lease. */
  claim(now: Date, leaseUntil: Date, token: string): Promise<ResponseRecord | null>;
  /** Records an attempt and the final state; false when the lease was lost meanwhile. */
  finish(
    id: string,
    token: string,
    set: Partial<ResponseRecord>,
    attempt: AttemptRecord | null,
  ): Promise<boolean>;
  /** Back to SCHEDULED for `due`, lease released; the attempt (if any) recorded. */
  reschedule(id: string, token: string, due: Date, attempt: AttemptRecord | null): Promise<boolean>;
  /** Deletes finished responses of the webhook beyond the `keep` newest; returns how many. */
  trim(webhookId: number, keep: number): Promise<number>;
  /** Fires waiting to be sent. */
  backlog(): Promise<number>;
}

/** A fixed-window counter shared by replicas (the response-read rate limit). */
export interface WindowCounter {
  /** The count in the window after this hit. */
  hit(key: string, window: number, expiresAt: Date): Promise<number>;
}

/** The answer of the target, or a network-level failure (status null). */
export interface SendResult {
  status: number | null;
  body: string;
  truncated: boolean;
  retryAfter: number | null;
  error: string | null;
  /** The address checks refused the target: retrying will not help. */
  refused: boolean;
}

export interface Sender {
  send(url: string, headers: Record<string, string>, body: string, timeoutMs: number): Promise<SendResult>;
}

/** Recoveries (issue 30); every change is one conditional single-document update. */
export interface RecoveryStore {
  /** Inserts it, or returns the recovery already RUNNING for the webhook (nothing inserted). */
  start(record: RecoveryRecord): Promise<{ created: boolean; recovery: RecoveryRecord }>;
  find(id: string): Promise<RecoveryRecord | null>;
  /** A RUNNING recovery that nobody holds (or whose lease expired), under a new lease. */
  claim(now: Date, leaseUntil: Date, token: string, holder: string): Promise<RecoveryRecord | null>;
  /** Moves the cursor and counts the resends of one batch, under the lease; the record after, or null. */
  advance(
    id: string,
    token: string,
    from: number,
    to: number,
    resent: number,
    leaseUntil: Date,
  ): Promise<RecoveryRecord | null>;
  /** Ends it (DONE or CANCELLED) under the lease; frees the webhook for another recovery. */
  end(id: string, token: string, state: 'DONE' | 'CANCELLED', reason: string | null): Promise<boolean>;
  /** Gives the lease back (this replica stops). */
  release(id: string, token: string): Promise<void>;
  /** RUNNING recoveries and the resends they still have to queue (for the metrics). */
  progress(): Promise<{ running: number; remaining: number }>;
}
