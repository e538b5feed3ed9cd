import type { ChangeInstanceState } from '@pack/contracts';

/**
 * What the catalog keeps, as the use cases see it. data/ stores these shapes as they are
 * (docs/decisions/0007 explains the records); the domain owns them so that it needs no import
 * from data/.
 */

export interface ServiceRecord {
  _id: number;
  name: string;
  description: string;
  owner_id: number;
  owner_name: string;
  auto_approval: boolean;
  /**
   * Whether consumers may submit declarations to this Service through the submission builder;
   * null (or absent on Services stored before the field existed): the current
   * `default_allow_submit_submission_builder` decides (docs/decisions/0008).
   */
  allow_submit_submission_builder?: boolean | null;
  /**
   * Grows with every change and goes out in the Service's `catalog.service.changed.v1` snapshot;
   * absent on Services stored before the event existed (read as 0).
   */
  version?: number;
  created_at: Date;
  updated_at: Date;
}

/**
 * One per consumer and Service, inserted at the consumer's first submission. Its latest and
 * latest approved declaration are kept on it, moved forward by conditional updates after each
 * submission and approval (decision 0005, amendment); absent until there is one.
 */
export interface ServiceItemRecord {
  _id: number;
  service_id: number;
  consumer_id: number;
  consumer_name: string;
  created_at: Date;
  latest_declaration_id?: number;
  latest_submitted_at?: Date;
  /** The approval number of the latest approval: what a later one is compared with. */
  latest_approval_seq?: number;
  latest_approved_declaration_id?: number;
  latest_approved_change_instance_id?: number;
  latest_approved_at?: Date | null;
  /** Set once the pointers are kept here (new items, or backfilled); absent on older items. */
  pointers_version?: number;
}

export interface DeclarationRecord {
  _id: number;
  service_id: number;
  service_item_id: number;
  consumer_id: number;
  /** The declaration as JSON text (DESIGN section 2: user JSON is stored as text). */
  content: string;
  created_at: Date;
}

/**
 * The current state of a Change Instance: a view of its transition records, written by the
 * request that made a transition and, should that request die half-way, by whoever next reads
 * the records (the next move, the validator handler, the catalog's consumer of its own events).
 */
export interface ChangeInstanceRecord {
  _id: number;
  service_id: number;
  /** The Service as it was at submission (shown if the Service is deleted later). */
  service_name: string;
  service_owner_id: number;
  service_owner_name: string;
  service_item_id: number;
  declaration_id: number;
  consumer_id: number;
  consumer_name: string;
  state: ChangeInstanceState;
  /** Number of the latest transition applied; transition 1 is the submission. */
  version: number;
  reasons: string[];
  auto_approved: boolean;
  /** 0 until approved; then the approval's number (a later approval has a larger one). */
  approval_seq: number;
  approved_at: Date | null;
  /** Version of the latest pipeline progress applied (docs/decisions/0026); 0 or absent: none yet. */
  pipeline_progress?: number;
  /** The Change Instance Validator's latest outcome (docs/decisions/0056); absent: none recorded. */
  validation?: ValidationOutcome;
  created_at: Date;
  updated_at: Date;
}

/**
 * What the validator made of an instance: its decision (applied), or none (`decision: null`) and
 * why; the instance then waits for its owner.
 */
export interface ValidationOutcome {
  decision: 'approve' | 'reject' | null;
  reason: string | null;
  at: Date;
}

export type ActorKind = 'user' | 'validator' | 'auto_approval' | 'pipeline';

export interface TransitionStep {
  from: ChangeInstanceState | null;
  to: ChangeInstanceState;
  by_kind: ActorKind;
  by_user_id: number | null;
  by_username: string | null;
  reasons: string[];
}

/**
 * One change of a Change Instance, with the events it causes. `_id` is `<instance>:<version>`:
 * the unique key makes two concurrent changes from the same version impossible (on FerretDB an
 * update is read-then-write, but a unique insert is atomic).
 */
export interface TransitionRecord {
  _id: string;
  change_instance_id: number;
  version: number;
  service_id: number;
  service_item_id: number;
  declaration_id: number;
  /** Usually one step; a submission to an auto-approving Service is two (-> PENDING -> APPROVED). */
  steps: TransitionStep[];
  state: ChangeInstanceState;
  reasons: string[];
  approval_seq: number;
  approved_at: Date | null;
  /** Version of the latest pipeline progress applied (a record may change only this: no step). */
  pipeline_progress?: number;
  /** The validator's latest outcome (a record may change only this: no step). */
  validation?: ValidationOutcome;
  /** Only on version 1: the instance as created, so it can be rebuilt if its insert never happened. */
  initial: ChangeInstanceRecord | null;
  created_at: Date;
}

/** Per service owner: may they create Services (Service Creator settings, docs/decisions/0008). */
export interface ServiceOwnerRecord {
  _id: number;
  username: string;
  allow_service_creation: boolean;
  created_at: Date;
  updated_at: Date;
}

export type { Page } from '@pack/contracts';

/** Which items or change instances a list may show; `service_ids` empty means none. */
export interface ScopeFilter {
  consumer_id?: number;
  service_ids?: readonly number[];
  service_id?: number;
}

export interface ChangeInstanceFilter extends ScopeFilter {
  service_item_id?: number;
  /** null or absent: every state. */
  states?: readonly ChangeInstanceState[] | null;
}

/** What a Service Item's transitions say about it. */
export interface ItemPointers {
  latest_declaration_id: number | null;
  latest_submitted_at: Date | null;
  latest_approved_declaration_id: number | null;
  latest_approved_change_instance_id: number | null;
  latest_approved_at: Date | null;
}
