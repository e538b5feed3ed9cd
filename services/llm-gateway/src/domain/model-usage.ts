import type { ProcessorSnapshot } from '@pack/contracts';

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
}
