import type { Envelope, Page, Stage, PageStart } from '@pack/contracts';
import type {
  LatestFilter,
  PackDataRecord,
  PipelineRecord,
  RunCancellation,
  RunOutcome,
  ServiceItemRecord,
  StageExpectation,
  StageRecord,
} from './pipeline-records';
import type { KnownService } from './processor-records';

/**
 * The storage contracts every group of the orchestrator's domain shares (src/data implements
 * them): pipelines, the items' approved declarations, the outbox's fast path and the projections
 * of Services and models. A group's own contracts are in its `store.ts`.
 */

export interface PipelineStore {
  nextId(): Promise<number>;
  nextRun(serviceItemId: number): Promise<number>;
  /**
   * Inserts a pipeline with its events; null when one with the same origin exists. Inserted, the
   * item's run numbered above it if one is stored (read after the insert, so of two concurrent
   * new runs the earlier-numbered one sees the later one, or was stored before its marks).
   */
  insert(record: PipelineRecord, events: Envelope[]): Promise<{ later: PipelineRecord | null } | null>;
  find(id: number): Promise<PipelineRecord | null>;
  /**
   * The pipeline as this replica last wrote it, if it still remembers it (no database read). It
   * may be stale: decide nothing on it alone, and move with its `rev` expected.
   */
  recent(id: number): PipelineRecord | null;
  /** Forgets a remembered copy (it proved stale). */
  forget(id: number): void;
  latest(serviceItemId: number): Promise<PipelineRecord | null>;
  /**
   * One atomic conditional update: applies `set` (stage fields by stage) and records `events`
   * only while `stage` matches `expect`. The pipeline after the move, or null when it did not match.
   */
  move(
    id: number,
    stage: Stage,
    expect: StageExpectation,
    set: Partial<Record<Stage, Partial<StageRecord>>>,
    events: Envelope[],
    cost: string | null,
    /** The result's call had no prices: counted in `unpriced_calls`. */
    unpriced?: boolean,
    /** The move ends the run so: the list status is its outcome (`statusAfter`). */
    ends?: RunOutcome | null,
  ): Promise<PipelineRecord | null>;
  /**
   * Counts the cost of a result that moves no stage (its attempt was replaced or timed out) on
   * pipeline `id`, once per request id; false when it was counted already.
   */
  countLate(id: number, requestId: string, cost: string | null, unpriced: boolean): Promise<boolean>;
  /** Whether a pipeline of this origin exists (a repeated approval starts nothing). */
  hasOrigin(origin: string): Promise<boolean>;
  /**
   * Marks every run of the item numbered below `run` that still has a stage running and is not
   * superseded as superseded by pipeline `by` (one update): from then on none of them starts a stage.
   */
  supersedeOlder(serviceItemId: number, run: number, by: number): Promise<void>;
  /** Undoes supersedeOlder for a run `by` that was never inserted (its origin existed). */
  unsupersede(serviceItemId: number, by: number): Promise<void>;
  /**
   * A run that a newer concurrent one took over before its first request went out: superseded by
   * `by`, `stage` FAILED with `error` and the request taken back out of its outbox (one write,
   * while the stage is SCHEDULED with `requestId` and the outbox holds exactly `written`).
   */
  withdraw(
    id: number,
    stage: Stage,
    requestId: string,
    written: Envelope[],
    by: number,
    error: string,
  ): Promise<boolean>;
  /**
   * Marks pipeline `id` superseded by the newer run `by`, while it has a stage running and is not
   * superseded yet; true when it was marked.
   */
  supersede(id: number, by: number): Promise<boolean>;
  /**
   * Marks every run of the item that works on the cancelled Change Instance `cancelled` (one
   * conditional update each, pinned to its `_id`; a run marked already is left as it is).
   */
  cancelRuns(serviceItemId: number, cancelled: RunCancellation): Promise<void>;
  /**
   * A run started for a Change Instance found cancelled right after its insert: while its first
   * request is still in its outbox (SCHEDULED with `requestId`, the outbox exactly `written`), the
   * request is taken back and `stage` FAILED with the reason; otherwise the run is only marked.
   */
  cancelStarted(
    id: number,
    stage: Stage,
    requestId: string,
    written: Envelope[],
    cancelled: RunCancellation,
  ): Promise<void>;
  /** Keeps a PackData version in the history (a repeat of the same attempt is ignored). */
  savePackData(record: PackDataRecord): Promise<void>;
  /** Pipelines with a stage SCHEDULED or WAITING_FOR_RESPONSE. */
  countRunning(): Promise<number>;
  /** A page of the latest pipeline of each Service Item, newest first, without PackData or generative UI. */
  listLatest(filter: LatestFilter, limit: number, start: PageStart): Promise<Page<PipelineRecord>>;
}

export interface ServiceItemStore {
  /** Keeps the item's declaration when newer than the stored one; true when applied. */
  applyApproved(item: ServiceItemRecord): Promise<boolean>;
  find(serviceItemId: number): Promise<ServiceItemRecord | null>;
  /** Remembers that the Change Instance was CANCELLED (idempotent; the first time is kept). */
  cancel(changeInstanceId: number, serviceItemId: number, at: Date): Promise<void>;
  /** The Change Instance's cancellation, or null while it is not known to be CANCELLED. */
  cancellation(changeInstanceId: number): Promise<RunCancellation | null>;
}

/**
 * Publishes what a pipeline move has just written to the pipeline's outbox at once, instead of
 * leaving it to the outbox relay (docs/decisions/0028); the relay stays the fallback.
 */
export interface RequestSender {
  /**
   * Sends a just scheduled stage's generate request with the other events its move wrote
   * (`written`, the request among them) and marks the stage WAITING_FOR_RESPONSE. The pipeline
   * after that move; null when the events are left to the outbox relay (the broker refused one)
   * or the stage has moved on (its result came first).
   */
  send(
    pipelineId: number,
    stage: Stage,
    request: Envelope,
    written: Envelope[],
  ): Promise<PipelineRecord | null>;
  /** Publishes the events a move wrote and removes them from the pipeline's outbox. */
  publish(pipelineId: number, written: Envelope[]): Promise<void>;
  /**
   * `publish` for the events of a run's end; the same update stops the timeout sweeper watching
   * the pipeline while none of its stages runs (docs/decisions/0028).
   */
  publishEnd(pipelineId: number, written: Envelope[]): Promise<void>;
}

/** The projections of the catalog's Services and the llm-gateway's models (data/directory-repository.ts). */
export interface DirectoryStore {
  /** A Service that exists (not deleted), or null. */
  service(id: number): Promise<KnownService | null>;
  serviceIdsOwnedBy(ownerId: number): Promise<number[]>;
  /** Whether an LLM model exists (known and not deleted). */
  modelExists(id: number): Promise<boolean>;
}
