import type { Connection } from 'mongoose';
import type { Envelope, Stage } from '@pack/contracts';
import { OUTBOX_FIELD, OUTBOX_PENDING_FIELD } from '@pack/db';
import type { PipelineRecord } from '../domain/records/pipeline-records';
import type { RequestSender } from '../domain/records/store';
import { record } from './pipeline-documents';
import { PIPELINES_COLLECTION, type PipelineRepository } from './pipeline-repository';
import { IDLE, WATCHED_FIELD } from './sweep-repository';

/**
 * The outbox's fast path for a pipeline move's events (docs/decisions/0028): publish them at once
 * with broker confirms, then ONE conditional update removes them from the pipeline's outbox,
 * clears its pending flag and (for a generate request) marks the stage WAITING_FOR_RESPONSE. The
 * update matches only while the outbox holds exactly these events (an exact array match), so an
 * event written by another move is never dropped with them. The relay's way (find the pending
 * documents, publish, pull, clear: three commands and more, and a drain that serializes every
 * pipeline of the replica) stays the fallback: a broker that refuses a publish leaves the events
 * to the relay's sweep, as does a crash between the write and the publish.
 */
export class PipelineRequestSender implements RequestSender {
  private readonly pipelines;

  constructor(
    connection: Connection,
    private readonly store: PipelineRepository,
    private readonly broker: { publish(envelope: Envelope): Promise<void> },
    private readonly kickRelay: () => void,
  ) {
    this.pipelines = connection.collection<PipelineRecord>(PIPELINES_COLLECTION);
  }

  async send(
    pipelineId: number,
    stage: Stage,
    request: Envelope,
    written: Envelope[],
  ): Promise<PipelineRecord | null> {
    if (!(await this.published(written))) return null;
    const requestId = (request.data as { request_id: string }).request_id;
    const state = `stages.${stage}.state`;
    const moved = await this.pipelines.findOneAndUpdate(
      {
        _id: pipelineId,
        [state]: 'SCHEDULED',
        [`stages.${stage}.request_id`]: requestId,
        [OUTBOX_FIELD]: written,
      },
      {
        $set: {
          [state]: 'WAITING_FOR_RESPONSE',
          status: 'running',
          updated_at: new Date(),
          [OUTBOX_FIELD]: [],
          [OUTBOX_PENDING_FIELD]: false,
        },
        $inc: { rev: 1 },
      },
      { returnDocument: 'after' },
    );
    if (moved) {
      const after = record(moved);
      this.store.remember(after);
      return after;
    }
    // Another event is pending, or the stage moved on: the relay's two steps, then the move alone.
    await this.removeSlowly(pipelineId, written);
    return this.store.move(
      pipelineId,
      stage,
      { states: ['SCHEDULED'], request_id: requestId },
      { [stage]: { state: 'WAITING_FOR_RESPONSE' } },
      [],
      null,
    );
  }

  async publish(pipelineId: number, written: Envelope[]): Promise<void> {
    if (written.length === 0 || !(await this.published(written))) return;
    await this.clear(pipelineId, written);
  }

  /**
   * A run's end: the update that removes its events also lets the sweeper go of the pipeline
   * (`watched: false`) while none of its stages runs, the sweeper's own unwatch condition, so
   * the sweeper's next round neither finds it nor spends a write on it. A stage started since
   * (a trigger) keeps it watched: then the events are removed as by `publish`.
   */
  async publishEnd(pipelineId: number, written: Envelope[]): Promise<void> {
    if (written.length === 0 || !(await this.published(written))) return;
    const ended = await this.pipelines.updateOne(
      { _id: pipelineId, [OUTBOX_FIELD]: written, ...IDLE },
      { $set: { [OUTBOX_FIELD]: [], [OUTBOX_PENDING_FIELD]: false, [WATCHED_FIELD]: false } },
    );
    if (ended.modifiedCount === 0) await this.clear(pipelineId, written);
  }

  /** Removes published events: one update while the outbox holds exactly them, else the relay's two steps. */
  private async clear(pipelineId: number, written: Envelope[]): Promise<void> {
    const cleared = await this.pipelines.updateOne(
      { _id: pipelineId, [OUTBOX_FIELD]: written },
      { $set: { [OUTBOX_FIELD]: [], [OUTBOX_PENDING_FIELD]: false } },
    );
    if (cleared.modifiedCount === 0) await this.removeSlowly(pipelineId, written);
  }

  /** Publishes side by side; on a refusal the relay is told and the events stay pending for it. */
  private async published(events: Envelope[]): Promise<boolean> {
    try {
      await Promise.all(events.map((event) => this.broker.publish(event)));
      return true;
    } catch {
      this.kickRelay();
      return false;
    }
  }

  private async removeSlowly(pipelineId: number, published: Envelope[]): Promise<void> {
    await this.pipelines.updateOne({ _id: pipelineId }, { $pullAll: { [OUTBOX_FIELD]: published } as never });
    await this.pipelines.updateOne(
      { _id: pipelineId, [OUTBOX_FIELD]: { $size: 0 } },
      { $set: { [OUTBOX_PENDING_FIELD]: false } },
    );
  }
}
