import type { WebhookResponseState, PageStart } from '@pack/contracts';
import type { AttemptRecord, Page, ResponseRecord, Trigger } from '../model';

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

/** The responses (fires) of webhooks; data/response-repository.ts implements it. */
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
    start: PageStart,
    filter?: Omit<ResponseFilter, 'webhookIds'>,
  ): Promise<Page<ResponseRecord>>;
  /** How many FAILED first fires (not resends) are in the window. */
  countFailed(window: FailedWindow): Promise<number>;
  /** The next FAILED first fires in the window after `afterSeq`, oldest (lowest seq) first. */
  failedAfter(window: FailedWindow, afterSeq: number, limit: number): Promise<ResponseRecord[]>;
  /** Newest first across webhooks (all of them for null). */
  listAcross(filter: ResponseFilter, limit: number, start: PageStart): Promise<Page<ResponseRecord>>;
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
  /** Webhooks holding more than `keep` responses. */
  webhooksBeyond(keep: number): Promise<number[]>;
  /** Fires waiting to be sent. */
  backlog(): Promise<number>;
}

/** A fixed-window counter shared by replicas (the response-read rate limit). */
export interface WindowCounter {
  /** The count in the window after this hit. */
  hit(key: string, window: number, expiresAt: Date): Promise<number>;
}
