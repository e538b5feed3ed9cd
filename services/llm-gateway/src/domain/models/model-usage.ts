import type { ProcessorSnapshot, ServiceSnapshot } from '@pack/contracts';

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
