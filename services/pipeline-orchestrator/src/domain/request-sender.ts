import type { Envelope, Stage } from '@pack/contracts';
import type { PipelineRecord } from './pipeline-model';

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
  /** Publishes the events a move wrote (a run's end) and removes them from the pipeline's outbox. */
  publish(pipelineId: number, written: Envelope[]): Promise<void>;
}
