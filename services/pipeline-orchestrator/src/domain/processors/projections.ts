import type { LlmModelSnapshot, ServiceSnapshot } from '@pack/contracts';

/**
 * Where the catalog's Service snapshots and the llm-gateway's model snapshots are kept. Each is
 * applied only if newer than what is stored, so redelivered and out-of-order events change
 * nothing (no processed-events marker needed). True when the snapshot was applied.
 */
export interface Projections {
  applyService(snapshot: ServiceSnapshot): Promise<boolean>;
  applyModel(snapshot: LlmModelSnapshot): Promise<boolean>;
}
