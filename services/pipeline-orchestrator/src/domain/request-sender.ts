import type { Envelope, Stage } from '@pack/contracts';
import type { PipelineRecord } from './pipeline-model';

/**
 * Sends the generate request of a stage just scheduled (the request is already in the pipeline's
 * outbox, written with the move) and marks the stage WAITING_FOR_RESPONSE.
 */
export interface RequestSender {
  /**
   * The pipeline after the stage's move to WAITING_FOR_RESPONSE; null when the request is left
   * to the outbox relay (the broker refused it) or the stage has moved on (its result came first).
   */
  send(pipelineId: number, stage: Stage, request: Envelope): Promise<PipelineRecord | null>;
}
