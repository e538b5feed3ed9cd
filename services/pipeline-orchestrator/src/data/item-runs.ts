import type { mongo } from 'mongoose';
import { STAGES } from '@pack/contracts';
import { LARGE_BATCH } from '@pack/db';
import { RUNNING_STATES, type PipelineRecord } from '../domain/records/pipeline-records';
import { WATCHED_FIELD } from './sweep-repository';

/** A pipeline one of whose stages runs (SCHEDULED or WAITING_FOR_RESPONSE). */
const RUNNING = {
  $or: STAGES.map((stage) => ({ [`stages.${stage}.state`]: { $in: [...RUNNING_STATES] } })),
};

/**
 * Writes to many runs of one Service Item, and the count of running pipelines, as reads our
 * FerretDB answers from an index followed by writes pinned to one `_id` each.
 *
 * FerretDB v1 (tools/ferretdb) runs a filter in PostgreSQL through an index only when every
 * condition is a top-level equality (or `$ne`, `$in`); a range (`run: {$lt}`), `$exists` or a
 * dotted path sends the whole filter down its in-memory path: PostgreSQL scans the collection and
 * FerretDB unmarshals every document of the item (every document, without an equality), and an
 * `updateMany` holds the whole collection meanwhile, so every other pipeline write waits. A soak
 * showed it reading more runs per call as the item's history grew (24 after 12 minutes). Here the
 * candidates come from equalities an index serves (`service_item_id`, and `watched`/`latest`,
 * flags kept on the run), and each write carries the whole condition and its `_id`: a run that
 * no longer meets it is left alone, as the `updateMany` would have. Same results on MongoDB.
 *
 * `watched` is set by every move that schedules a stage and cleared only by a conditional update
 * that requires no stage to run (sweep-repository.ts): every running pipeline is watched.
 */
export class ItemRuns {
  constructor(private readonly pipelines: mongo.Collection<PipelineRecord>) {}

  /** Run ids of the item matching `flags` (top-level equalities), with their run numbers. */
  private async candidates(serviceItemId: number, flags: Record<string, unknown>) {
    return this.pipelines
      .find(
        { service_item_id: serviceItemId, ...flags },
        { projection: { _id: 1, run: 1 }, batchSize: LARGE_BATCH },
      )
      .toArray();
  }

  /** The item's runs before `run` leave the list of latest pipelines (docs/decisions/0042). */
  async clearOlderLatest(serviceItemId: number, run: number): Promise<void> {
    const older = (await this.candidates(serviceItemId, { latest: true })).filter((one) => one.run < run);
    await Promise.all(
      older.map((one) =>
        this.pipelines.updateOne(
          { _id: one._id, latest: true, run: { $lt: run } },
          { $set: { latest: false } },
        ),
      ),
    );
  }

  /** Marks the item's running runs before `run` superseded by `by` (their rev changes). */
  async supersedeOlder(serviceItemId: number, run: number, by: number): Promise<void> {
    const older = (await this.candidates(serviceItemId, { [WATCHED_FIELD]: true })).filter(
      (one) => one.run < run,
    );
    await Promise.all(
      older.map((one) =>
        this.pipelines.updateOne(
          { _id: one._id, run: { $lt: run }, superseded_by: { $exists: false }, ...RUNNING },
          { $set: { superseded_by: by, updated_at: new Date() }, $inc: { rev: 1 } },
        ),
      ),
    );
  }

  /** Undoes supersedeOlder for a run `by` that was never inserted. */
  async unsupersede(serviceItemId: number, by: number): Promise<void> {
    const marked = await this.candidates(serviceItemId, { superseded_by: by });
    await Promise.all(
      marked.map((one) =>
        this.pipelines.updateOne(
          { _id: one._id, superseded_by: by },
          { $unset: { superseded_by: '' }, $set: { updated_at: new Date() }, $inc: { rev: 1 } },
        ),
      ),
    );
  }

  /** Pipelines with a running stage, for the gauge: read among the watched ones (an index). */
  async countRunning(): Promise<number> {
    const projection = Object.fromEntries(STAGES.map((stage) => [`stages.${stage}.state`, 1]));
    const watched = await this.pipelines
      .find({ [WATCHED_FIELD]: true }, { projection, batchSize: LARGE_BATCH })
      .toArray();
    const running = new Set<string | null>(RUNNING_STATES);
    return watched.filter((one) => STAGES.some((stage) => running.has(one.stages?.[stage]?.state ?? null)))
      .length;
  }
}
