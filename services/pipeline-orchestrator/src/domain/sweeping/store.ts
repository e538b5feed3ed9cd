import type { PipelineRecord } from '../records/pipeline-records';

/** What the sweeper reads: pipelines that may have a stage running, and the models' timeouts. */
export interface SweepStore {
  /**
   * Pipelines flagged as watched (set with every SCHEDULED move), `limit` at a time by id after
   * `afterId`. The flag is an indexed top-level equality, pushed down on FerretDB.
   */
  watched(afterId: number, limit: number): Promise<PipelineRecord[]>;
  /** Clears the flag while no stage of the pipeline runs (a stage scheduled meanwhile keeps it). */
  unwatch(id: number): Promise<boolean>;
  /**
   * The timeouts in seconds of the model each processor uses now and of that model's fallbacks
   * (the call may move to each in turn), in chain order, by processor id.
   */
  modelTimeouts(processorIds: readonly number[]): Promise<Map<number, readonly number[]>>;
}
