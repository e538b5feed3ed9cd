import type { LlmModelSnapshot, ServiceSnapshot, PageStart } from '@pack/contracts';
import type { Envelope, Page } from '@pack/contracts';
import type { ProcessorFilter, ProcessorRecord, SlotHolder } from '../records/processor-records';

/** Processors and their events; data/processor-repository.ts implements it. */
export interface ProcessorStore {
  nextId(): Promise<number>;
  /** Inserts a processor together with its `created` event (outbox). */
  insert(record: ProcessorRecord, event: Envelope): Promise<void>;
  /** A processor that is not deleted, or null. */
  find(id: number): Promise<ProcessorRecord | null>;
  /** Any processor, deleted ones included (a stale activation slot names one). */
  findAny(id: number): Promise<ProcessorRecord | null>;
  list(filter: ProcessorFilter, limit: number, start: PageStart): Promise<Page<ProcessorRecord>>;
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

/**
 * Where the catalog's Service snapshots and the llm-gateway's model snapshots are kept. Each is
 * applied only if newer than what is stored, so redelivered and out-of-order events change
 * nothing (no processed-events marker needed). True when the snapshot was applied.
 */
export interface ProjectionStore {
  applyService(snapshot: ServiceSnapshot): Promise<boolean>;
  applyModel(snapshot: LlmModelSnapshot): Promise<boolean>;
}
