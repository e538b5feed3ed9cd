import type { Connection } from 'mongoose';
import type { Envelope, Stage } from '@pack/contracts';
import { OUTBOX_FIELD, OUTBOX_PENDING_FIELD } from '@pack/db';
import type { PipelineRecord, PipelineStore } from '../domain/pipeline-model';
import type { RequestSender } from '../domain/request-sender';
import { PIPELINES_COLLECTION, record } from './pipeline-repository';

/**
 * The outbox's fast path for generate requests (docs/decisions/0028): publish the request at once
 * with a broker confirm, then ONE conditional update marks the stage WAITING_FOR_RESPONSE, removes
 * the request from the pipeline's outbox and clears its pending flag. The relay's way (find the
 * pending documents, publish, pull, clear: three commands and a drain that serializes every
 * pipeline of the replica) stays the fallback: a broker that refuses the publish leaves the
 * request to the relay's sweep, as does a crash between the write and the publish.
 */
export class PipelineRequestSender implements RequestSender {
  private readonly pipelines;

  constructor(
    connection: Connection,
    private readonly store: PipelineStore,
    private readonly broker: { publish(envelope: Envelope): Promise<void> },
    private readonly kickRelay: () => void,
  ) {
    this.pipelines = connection.collection<PipelineRecord>(PIPELINES_COLLECTION);
  }

  async send(pipelineId: number, stage: Stage, request: Envelope): Promise<PipelineRecord | null> {
    try {
      await this.broker.publish(request);
    } catch {
      this.kickRelay();
      return null;
    }
    const requestId = (request.data as { request_id: string }).request_id;
    const state = `stages.${stage}.state`;
    // Only when this request is the outbox's single entry may one update also clear the flag.
    const moved = await this.pipelines.findOneAndUpdate(
      {
        _id: pipelineId,
        [state]: 'SCHEDULED',
        [`stages.${stage}.request_id`]: requestId,
        [OUTBOX_FIELD]: { $size: 1 },
      },
      {
        $set: { [state]: 'WAITING_FOR_RESPONSE', updated_at: new Date(), [OUTBOX_PENDING_FIELD]: false },
        $pull: { [OUTBOX_FIELD]: request } as never,
      },
      { returnDocument: 'after' },
    );
    if (moved) return record(moved);
    // Another event is pending, or the stage moved on: the relay's two steps, then the move alone.
    await this.pipelines.updateOne({ _id: pipelineId }, { $pull: { [OUTBOX_FIELD]: request } as never });
    await this.pipelines.updateOne(
      { _id: pipelineId, [OUTBOX_FIELD]: { $size: 0 } },
      {
        $set: { [OUTBOX_PENDING_FIELD]: false },
      },
    );
    return this.store.move(
      pipelineId,
      stage,
      { states: ['SCHEDULED'], request_id: requestId },
      { [stage]: { state: 'WAITING_FOR_RESPONSE' } },
      [],
      null,
    );
  }
}
