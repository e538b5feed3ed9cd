import type { TraceCarrier } from '@pack/tracing';
import { STAGES } from '@pack/contracts';
import type { ChangeInstanceState, EventData, events, PipelineStatus, Stage } from '@pack/contracts';

/** How a stage's reply is shaped: the mode of the final schema sent (stage-requests/final-schema.ts). */
export type SchemaMode =
  | 'none'
  | 'custom'
  | 'gen_ui_catalog'
  | 'gen_ui_deterministic'
  | 'combined'
  | 'universal_executor'
  | 'validator';

/** One `llm.generate.completed.v1` payload. */
export type GenerateResult = EventData<typeof events.llmGenerateCompleted>;

export type StageState = 'SCHEDULED' | 'WAITING_FOR_RESPONSE' | 'OK' | 'FAILED';

/** States in which a stage has a generate request out: only its result may move it on. */
export const RUNNING_STATES: readonly StageState[] = ['SCHEDULED', 'WAITING_FOR_RESPONSE'];

export const NEXT_STAGE: Record<Stage, Stage | null> = {
  CONFIG: 'VERIFY',
  VERIFY: 'EXECUTION',
  EXECUTION: null,
};
export const PREVIOUS_STAGE: Record<Stage, Stage | null> = {
  CONFIG: null,
  VERIFY: 'CONFIG',
  EXECUTION: 'VERIFY',
};

/**
 * One stage of one pipeline. `attempt` counts the stage's starts in this pipeline; the generate
 * request of an attempt has the id `pipeline-<id>-<stage>-<attempt>`, so a result names exactly
 * the attempt it belongs to and a late one of an earlier attempt changes nothing.
 */
export interface StageRecord {
  state: StageState | null;
  processor_id: number | null;
  attempt: number;
  request_id: string | null;
  schema_mode: SchemaMode | null;
  started_at: Date | null;
  finished_at: Date | null;
  error: string | null;
  cost: string | null;
  /** The latest PackData as JSON text (user JSON, DESIGN section 2); history in `pack_data`. */
  pack_data_json: string | null;
  gen_ui_json: string | null;
  gen_ui_valid: boolean | null;
  /** Why the generative UI is not rendered (`gen_ui_valid: false`); absent in stages stored before it was kept. */
  gen_ui_error?: string | null;
  /** The latest attempt's call had no prices: its cost is unknown, not 0 (spec 2.2). */
  unpriced?: boolean;
  /** The model whose reply ended the latest attempt, and the asked one when a fallback answered. */
  answered_model_id?: number | null;
  fallback_from?: number | null;
  /** The result came after a newer run of the item superseded this one: recorded, nothing started. */
  superseded?: boolean;
  /** Where the stage's outcome came from: its processor, or PackData pushed from outside (endpoint 5). */
  origin?: StageOrigin | null;
  /** Times the sweeper sent the stage's request again for want of a result (0028, "Crashes"). */
  resends?: number;
  resent_at?: Date | null;
  /** The trace context of the stage's `pack.stage` span (absent when tracing is off): a resend continues it. */
  trace?: TraceCarrier;
  /** A result that came after the stage was failed by the timeout: recorded, its cost counted. */
  late_result?: { ok: boolean; cost: string | null; unpriced: boolean; received_at: Date } | null;
}

export type StageOrigin = 'generated' | 'pushed';

/**
 * What a new attempt of a stage (scheduled, or PackData pushed) resets of the attempt it
 * replaces: who answered, its prices, a late result, resends, the superseded mark. Its own
 * outcome fields are set by its start and its end (docs/decisions/0056).
 */
export function replacedAttemptCleared(): Partial<StageRecord> {
  return {
    answered_model_id: null,
    fallback_from: null,
    unpriced: false,
    late_result: null,
    superseded: false,
    resends: 0,
    resent_at: null,
    gen_ui_error: null,
  };
}

/**
 * A pipeline: one run of a Service Item's three stages from one approved declaration.
 * `origin` is unique (`approval:<change instance>` or `trigger:<uuid>`): a redelivered approval
 * inserts nothing the second time.
 */
export interface PipelineRecord {
  _id: number;
  service_item_id: number;
  service_id: number;
  run: number;
  origin: string;
  declaration_id: number;
  declaration_json: string;
  stages: Record<Stage, StageRecord>;
  /** The cost of every priced generate result of this pipeline (exact decimal strings). */
  costs: string[];
  /** Calls of this pipeline whose model had no prices (absent: none); their cost is in no total. */
  unpriced_calls?: number;
  /**
   * The newer run of the item that superseded this one while it was running (a retrigger, a
   * CONFIG trigger, a new approval): its pending results are recorded, it starts no further stage.
   */
  superseded_by?: number;
  /**
   * The run's Change Instance was CANCELLED (docs/decisions/0055): a result of a call already made
   * is recorded with its cost, and nothing further starts or ends the run's Change Instance.
   */
  cancelled?: RunCancellation;
  /**
   * The generate results whose cost this pipeline has counted, by request id (ids have no '.'):
   * a result of a replaced attempt (a trigger, a push or a newer run took its stage over) or one
   * that came after its stage's timeout is counted once, whatever the redeliveries (0024).
   */
  counted?: Record<string, CountedResult>;
  /** Retriggers by PackData pushed into EXECUTION since the run of this Change Instance began (bounded). */
  push_retriggers?: number;
  /** The Change Instance whose approval the run works on; its progress is reported there (progress.ts). */
  change_instance_id?: number | null;
  /** Earlier runs' outcomes, feedback and optimizer notes, given to CONFIG (execution-context.ts). */
  execution_context?: string | null;
  created_at: Date;
  updated_at: Date;
  /**
   * Bumped by every write that changes the pipeline (not by outbox bookkeeping): a move that
   * expects a `rev` fails if anything changed since that copy was read.
   */
  rev?: number;
  /**
   * The item's latest run (the list of latest pipelines, docs/decisions/0042): set on insert,
   * cleared when a newer run of the item is inserted. Absent on pipelines stored before it.
   */
  latest?: boolean;
  /** Where the run is, by the stage that moved last (`statusAfter`), kept by every stage move. */
  status?: PipelineStatus;
}

/**
 * The list status a write leaves. A write that ends the run (`ends`) leaves its outcome: `done`
 * for COMPLETED at whichever stage, `failed` for FAILED. Any other write leaves that of the last
 * stage, in stage order, whose state it sets (null: it sets no state). Exact in the same
 * single-document write, no read of the other stages (docs/decisions/0042, 0056).
 */
export function statusAfter(
  set: Partial<Record<Stage, Partial<StageRecord>>>,
  ends: RunOutcome | null = null,
): PipelineStatus | null {
  if (ends !== null) return ends === 'COMPLETED' ? 'done' : 'failed';
  for (const stage of [...STAGES].reverse()) {
    const state = set[stage]?.state;
    if (state === undefined || state === null) continue;
    if (state === 'FAILED') return 'failed';
    if (state === 'OK') return stage === 'EXECUTION' ? 'done' : 'waiting';
    return 'running';
  }
  return null;
}

/** Which latest pipelines a list shows: of these Services (absent: every Service), in this status. */
export interface LatestFilter {
  service_ids?: readonly number[];
  status?: PipelineStatus;
}

/** A counted generate result: `late` when it moved no stage (its attempt was over or replaced). */
export interface CountedResult {
  cost: string | null;
  unpriced: boolean;
  late: boolean;
}

/** A Service Item as the catalog's change-instance events describe it: its latest approved declaration. */
export interface ServiceItemRecord {
  service_item_id: number;
  service_id: number;
  declaration_id: number;
  declaration_json: string;
  /** The Change Instance of that approval (absent for items stored before it was kept). */
  change_instance_id?: number;
  /**
   * The catalog's number of that approval (decision 0005: the highest is the latest approved
   * declaration); absent when the approval event did not carry it or the item was read from the catalog.
   */
  approval_seq?: number;
}

/** Why a run stopped: its Change Instance's cancellation. */
export interface RunCancellation {
  change_instance_id: number;
  at: Date;
  reason: string;
}

/** The reason a cancelled run shows, on the run and on the stage it did not start. */
export function cancelledReason(changeInstanceId: number): string {
  return `cancelled: Change Instance ${changeInstanceId} was CANCELLED; no further stage starts`;
}

/** What a stage move expects to find: the stage in one of `states`, at `attempt` / `request_id` when given. */
export interface StageExpectation {
  states: readonly (StageState | null)[];
  attempt?: number;
  request_id?: string;
  /** The pipeline unchanged since the copy at this `rev` (a remembered copy, see `recent`). */
  rev?: number;
  /** The pipeline neither superseded by a newer run nor cancelled (a move that starts a next stage or ends the run). */
  current?: boolean;
  /** No late result recorded on the stage yet (`late_result` null or absent). */
  no_late_result?: boolean;
  /** Other stages at these attempts (a move that also starts one of them). */
  others?: Partial<Record<Stage, number>>;
}

/** One stored PackData version (history: one per stage attempt). */
export interface PackDataRecord {
  _id: string;
  pipeline_id: number;
  service_item_id: number;
  stage: Stage;
  data_json: string;
  gen_ui_json: string | null;
  gen_ui_valid: boolean | null;
  created_at: Date;
}

export type RunOutcome = 'COMPLETED' | 'FAILED';

/** What a Change Instance event tells the pipeline (created or state_changed). */
export interface ChangeInstanceNews {
  change_instance_id: number;
  service_item_id: number;
  declaration_id: number;
  declaration_json: string;
  service: { id: number };
  state: ChangeInstanceState;
  /** A move to APPROVED: the approval's number (a later approval has a greater one). */
  approval_seq?: number;
}

/** The stages of `pipeline` that run (SCHEDULED or WAITING_FOR_RESPONSE): the sweeper watches these. */
export function runningStages(pipeline: Pick<PipelineRecord, 'stages'>): Stage[] {
  return STAGES.filter((stage) => RUNNING_STATES.includes(pipeline.stages[stage].state as StageState));
}
