import type { Envelope, ProcessorSnapshot, ServiceSnapshot, PageStart } from '@pack/contracts';
import type { LlmModelRecord, Page, WriteOutcome } from './model';

/**
 * Everything the use cases need from storage; data/llm-model-repository.ts implements it. Every
 * change is written together with its event (one single-document write; the outbox relay
 * publishes it), and applies only to the version it was computed from, so two concurrent
 * changes never publish the same version.
 */
export interface LlmModelStore {
  /** A new integer id, unique across replicas. */
  nextId(): Promise<number>;
  /** ConflictError when the name is taken. */
  insert(record: LlmModelRecord, event: Envelope): Promise<void>;
  /** Deleted models are not found. */
  find(id: number): Promise<LlmModelRecord | null>;
  list(limit: number, start: PageStart): Promise<Page<LlmModelRecord>>;
  /** The model after the change (version + 1); ConflictError when the new name is taken. */
  update(
    id: number,
    version: number,
    set: Partial<LlmModelRecord>,
    event: Envelope,
  ): Promise<WriteOutcome<LlmModelRecord>>;
  /** Ids of live models other than `id` whose fallback_models name `id`, at most `limit`. */
  fallbackOf(id: number, limit: number): Promise<number[]>;
  /** Deletes (keeping a tombstone that holds the event until it is published). */
  remove(id: number, version: number, event: Envelope): Promise<WriteOutcome<true>>;
}

/**
 * Which models the AI processors use, as the pipeline orchestrator's processor events tell it
 * (this service never reads the orchestrator's database). data/model-usage-repository.ts
 * implements it.
 */
export interface ModelUsageStore {
  /**
   * Records a processor's snapshot unless the same or a newer version of that processor is
   * already known, so redelivered and out-of-order events change nothing.
   */
  apply(snapshot: ProcessorSnapshot): Promise<void>;
  /** Ids of up to `limit` active, not deleted processors whose model is `modelId`. */
  activeProcessorsUsing(modelId: number, limit: number): Promise<number[]>;
  /** Records who owns a Service (the catalog's service events), the newest version winning. */
  applyService(snapshot: ServiceSnapshot): Promise<void>;
}

/**
 * The processors of the Services a user owns now (deleted processors included: their calls were
 * the owner's), so the dashboard shows a service owner only the calls of their own processors.
 */
export interface OwnedProcessors {
  processorsOwnedBy(ownerId: number): Promise<number[]>;
}
