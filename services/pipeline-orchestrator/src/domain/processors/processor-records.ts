import type { Envelope, Page, ProcessorKind } from '@pack/contracts';

export type { Page } from '@pack/contracts';

/**
 * An AI processor as stored. The response schema is user JSON, kept as text (DESIGN section 2);
 * a deleted processor stays as a tombstone (`deleted`) so its last event version is never reused.
 * `version` grows with every change and goes out in the processor's events.
 */
export interface ProcessorRecord {
  _id: number;
  name: string;
  service_id: number;
  kind: ProcessorKind;
  llm_model_id: number;
  prompt: string;
  response_schema_json: string | null;
  generative_ui: boolean;
  active: boolean;
  deleted: boolean;
  version: number;
  created_at: Date;
  updated_at: Date;
}

export interface ProcessorFilter {
  /** Only processors of these Services (a service owner's); absent: every Service. */
  service_ids?: readonly number[];
  service_id?: number;
  kind?: ProcessorKind;
}

/** Processors and their events; data/processor-repository.ts implements it. */
export interface ProcessorStore {
  nextId(): Promise<number>;
  /** Inserts a processor together with its `created` event (outbox). */
  insert(record: ProcessorRecord, event: Envelope): Promise<void>;
  /** A processor that is not deleted, or null. */
  find(id: number): Promise<ProcessorRecord | null>;
  /** Any processor, deleted ones included (a stale activation slot names one). */
  findAny(id: number): Promise<ProcessorRecord | null>;
  list(filter: ProcessorFilter, limit: number, offset: number): Promise<Page<ProcessorRecord>>;
  /**
   * Applies `set` and records `event` in the same write, only while the processor is not deleted
   * and still at `version`. The processor after the change, or null when another change came first.
   */
  update(
    id: number,
    version: number,
    set: Partial<ProcessorRecord>,
    event: Envelope,
  ): Promise<ProcessorRecord | null>;
}

/** Who holds the active slot of a Service and kind, since when. */
export interface SlotHolder {
  processor_id: number;
  since: Date;
}

/**
 * One document per Service and kind naming its active processor: the unique key decides which
 * of two concurrent activations wins, on every server (docs/decisions/0002, 0022).
 */
export interface ActiveSlotStore {
  /** Claims the slot for `processorId` unless it is held; returns the holder either way. */
  claim(key: string, processorId: number, now: Date): Promise<SlotHolder>;
  /** Moves a slot from a stale holder to `to`; false when someone else moved it first. */
  takeOver(key: string, from: SlotHolder, to: number, now: Date): Promise<boolean>;
  /** Frees the slot if `processorId` holds it. */
  release(key: string, processorId: number): Promise<void>;
}

/** A Service as the catalog's `catalog.service.changed.v1` events describe it. */
export interface KnownService {
  service_id: number;
  name: string;
  owner_id: number;
  owner_name: string;
  deleted: boolean;
}

/** The projections of the catalog's Services and the llm-gateway's models (data/projections.ts). */
export interface Directory {
  /** A Service that exists (not deleted), or null. */
  service(id: number): Promise<KnownService | null>;
  serviceIdsOwnedBy(ownerId: number): Promise<number[]>;
  /** Whether an LLM model exists (known and not deleted). */
  modelExists(id: number): Promise<boolean>;
}

/** Where the active processor of a Service and kind is found (stage-processors.ts, processor-cache.ts). */
export interface ActiveProcessors {
  /** The active processor of a Service for a kind, or null. */
  active(serviceId: number, kind: ProcessorKind): Promise<ProcessorRecord | null>;
}
