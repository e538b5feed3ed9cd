import type { mongo } from 'mongoose';
import type { Envelope, Stage } from '@pack/contracts';
import { OUTBOX_FIELD, OUTBOX_PENDING_FIELD } from '@pack/db';
import type { PipelineRecord, RunCancellation } from '../domain/records/pipeline-records';

/**
 * Runs whose Change Instance was CANCELLED (docs/decisions/0055). The mark bumps `rev`, so a
 * remembered copy of the run is stale afterwards and its next result is decided on a fresh read;
 * every move that starts a stage or ends the run expects the mark absent (`current`).
 */
export class CancelledRuns {
  constructor(private readonly pipelines: mongo.Collection<PipelineRecord>) {}

  /** Marks the item's runs of the cancelled Change Instance; their ids. */
  async cancelRuns(serviceItemId: number, cancelled: RunCancellation): Promise<number[]> {
    // Top-level equalities only: FerretDB answers them from the item's index (item-runs.ts).
    const runs = await this.pipelines
      .find(
        { service_item_id: serviceItemId, change_instance_id: cancelled.change_instance_id },
        { projection: { _id: 1 } },
      )
      .toArray();
    await Promise.all(runs.map((one) => this.mark(one._id, cancelled)));
    return runs.map((one) => one._id);
  }

  /** A run found cancelled right after its insert: its request taken back while unsent, else marked. */
  async cancelStarted(
    id: number,
    stage: Stage,
    requestId: string,
    written: Envelope[],
    cancelled: RunCancellation,
  ): Promise<void> {
    const now = new Date();
    const withdrawn = await this.pipelines.updateOne(
      {
        // Marked already or not (the cancellation's own marking may have come first).
        _id: id,
        [`stages.${stage}.state`]: 'SCHEDULED',
        [`stages.${stage}.request_id`]: requestId,
        [OUTBOX_FIELD]: written,
      },
      {
        $set: {
          cancelled,
          status: 'failed',
          [`stages.${stage}.state`]: 'FAILED',
          [`stages.${stage}.error`]: cancelled.reason,
          [`stages.${stage}.finished_at`]: now,
          [OUTBOX_FIELD]: [],
          [OUTBOX_PENDING_FIELD]: false,
          updated_at: now,
        },
        $inc: { rev: 1 },
      },
    );
    if (withdrawn.modifiedCount === 0) await this.mark(id, cancelled);
  }

  private async mark(id: number, cancelled: RunCancellation): Promise<void> {
    await this.pipelines.updateOne(
      { _id: id, cancelled: { $exists: false } },
      { $set: { cancelled, updated_at: new Date() }, $inc: { rev: 1 } },
    );
  }
}
