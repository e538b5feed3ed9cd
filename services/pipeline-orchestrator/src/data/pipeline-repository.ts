import type { Connection } from 'mongoose';
import type { Envelope, Page, Stage, PageStart } from '@pack/contracts';
import { STAGES } from '@pack/contracts';
import {
  findPage,
  insertAll,
  isDuplicateKey,
  nextCounterValue,
  OUTBOX_FIELD,
  OUTBOX_PENDING_FIELD,
  outboxFields,
  withOutbox,
} from '@pack/db';
import {
  RUNNING_STATES,
  runningStages,
  statusAfter,
  type LatestFilter,
  type PackDataRecord,
  type PipelineRecord,
  type RunCancellation,
  type RunOutcome,
  type StageExpectation,
  type StageRecord,
} from '../domain/records/pipeline-records';
import { type PipelineStore } from '../domain/records/store';
import { CancelledRuns } from './cancelled-runs';
import { ItemRuns } from './item-runs';
import { RememberedPipelines } from './remembered-pipelines';
import { record, SUMMARY, WITHOUT_OUTBOX } from './pipeline-documents';
import { WATCHED_FIELD } from './sweep-repository';
import { ensurePipelineIndexes } from './pipeline-indexes';

export const PIPELINES_COLLECTION = 'pipelines';
export const PACK_DATA_COLLECTION = 'pack_data';

/**
 * One document per pipeline, its stages as sub-documents by name (no arrays of arrays), carrying
 * its own outbox: a stage move and the generate request it sends are one single-document write.
 */
export class PipelineRepository implements PipelineStore {
  private readonly pipelines;
  private readonly packData;
  /** Pipelines as this replica last wrote them, by id (`recent`): a stage's result usually comes back here. */
  private readonly remembered = new RememberedPipelines();
  /** Writes to several runs of an item, and the running count, by indexed reads (item-runs.ts). */
  private readonly itemRuns;
  /** The marks of runs whose Change Instance was cancelled (cancelled-runs.ts). */
  private readonly cancelledRuns;

  constructor(private readonly connection: Connection) {
    this.pipelines = connection.collection<PipelineRecord>(PIPELINES_COLLECTION);
    this.packData = connection.collection<PackDataRecord>(PACK_DATA_COLLECTION);
    this.itemRuns = new ItemRuns(this.pipelines);
    this.cancelledRuns = new CancelledRuns(this.pipelines);
  }

  ensureIndexes(): Promise<void> {
    return ensurePipelineIndexes(this.pipelines, this.packData);
  }

  /**
   * Pipeline ids and run numbers are the counters' `$inc` alone, without `nextId`'s claim: on
   * the servers we support (MongoDB, our FerretDB build; docs/decisions/0002, checked by
   * packages/db/test/atomicity.test.ts) concurrent `findOneAndUpdate` `$inc`s return distinct
   * values, so the claim decided nothing there and cost an insert (and a document kept for
   * ever) per number on every new run. The pipeline's unique `_id` still
   * refuses a second pipeline with one id. It keeps the same counter documents, so numbering continues across an upgrade.
   */
  nextId(): Promise<number> {
    return nextCounterValue(this.connection, PIPELINES_COLLECTION);
  }

  nextRun(serviceItemId: number): Promise<number> {
    return nextCounterValue(this.connection, `pipeline_runs_${serviceItemId}`);
  }

  async insert(
    pipeline: PipelineRecord,
    events: Envelope[],
  ): Promise<{ later: PipelineRecord | null } | null> {
    try {
      // The sweeper watches a pipeline while a stage runs (0028). One whose first stage did not
      // start (AI processors off) has nothing to watch: watched, the sweeper's next round would
      // change it later, behind the back of whoever just read it.
      const watched = { [WATCHED_FIELD]: runningStages(pipeline).length > 0 };
      const listed = { latest: true, status: statusAfter(pipeline.stages) ?? 'running' } as const;
      await this.pipelines.insertOne({
        ...pipeline,
        ...listed,
        rev: 0,
        ...watched,
        ...outboxFields(...events),
      });
      this.remember({ ...pipeline, ...listed, rev: 0 });
      return { later: await this.leaveList(pipeline) };
    } catch (error) {
      if (isDuplicateKey(error)) return null;
      throw error;
    }
  }

  /**
   * After inserting `pipeline` as latest: the item's earlier runs leave the list, and so does
   * `pipeline` itself if a later run was inserted first (run numbers are taken before the insert,
   * so two new runs may be inserted out of order). Each insert clears, then looks: of two
   * concurrent ones, the later-run insert clears the other, or the other sees it. A crash in
   * between leaves an extra latest run until the item's next run (docs/decisions/0042). Run 1
   * has no earlier run to clear (run numbers start at 1). The look reads the item's newest run,
   * which answers the caller's own question too (is there a later run? `Pipelines.startRun`).
   */
  private async leaveList(pipeline: PipelineRecord): Promise<PipelineRecord | null> {
    const item = pipeline.service_item_id;
    if (pipeline.run > 1) await this.itemRuns.clearOlderLatest(item, pipeline.run);
    const newest = await this.latest(item);
    if (!newest || newest.run <= pipeline.run) return null;
    await this.pipelines.updateOne({ _id: pipeline._id }, { $set: { latest: false } });
    return newest;
  }

  find(id: number): Promise<PipelineRecord | null> {
    return this.pipelines.findOne({ _id: id }, { projection: WITHOUT_OUTBOX });
  }

  recent(id: number): PipelineRecord | null {
    return this.remembered.get(id);
  }

  forget(id: number): void {
    this.remembered.forget(id);
  }

  /** Keeps a pipeline this replica wrote while one of its stages runs (remembered-pipelines.ts). */
  remember(pipeline: PipelineRecord): void {
    this.remembered.keep(pipeline);
  }

  latest(serviceItemId: number): Promise<PipelineRecord | null> {
    return this.pipelines.findOne(
      { service_item_id: serviceItemId },
      { sort: { run: -1 }, projection: WITHOUT_OUTBOX },
    );
  }

  async move(
    id: number,
    stage: Stage,
    expect: StageExpectation,
    set: Partial<Record<Stage, Partial<StageRecord>>>,
    events: Envelope[],
    cost: string | null,
    unpriced = false,
    ends: RunOutcome | null = null,
  ): Promise<PipelineRecord | null> {
    const filter: Record<string, unknown> = {
      _id: id,
      [`stages.${stage}.state`]: { $in: [...expect.states] },
    };
    if (expect.attempt !== undefined) filter[`stages.${stage}.attempt`] = expect.attempt;
    if (expect.request_id !== undefined) filter[`stages.${stage}.request_id`] = expect.request_id;
    if (expect.rev !== undefined) filter.rev = expect.rev;
    if (expect.current)
      Object.assign(filter, { superseded_by: { $exists: false }, cancelled: { $exists: false } });
    if (expect.no_late_result) filter[`stages.${stage}.late_result`] = null;
    for (const [other, attempt] of Object.entries(expect.others ?? {}))
      filter[`stages.${other}.attempt`] = attempt;
    const fields: Record<string, unknown> = { updated_at: new Date() };
    for (const [name, changes] of Object.entries(set))
      for (const [field, value] of Object.entries(changes)) fields[`stages.${name}.${field}`] = value;
    if (Object.values(set).some((changes) => changes.state === 'SCHEDULED')) fields[WATCHED_FIELD] = true;
    // The result whose cost this move records: a late copy of it is not counted again (countLate).
    if ((cost !== null || unpriced) && expect.request_id !== undefined)
      fields[`counted.${expect.request_id}`] = { cost, unpriced, late: expect.no_late_result === true };
    const status = statusAfter(set, ends);
    if (status !== null) fields.status = status;
    let update: Record<string, unknown> = {
      $set: fields,
      $inc: unpriced ? { rev: 1, unpriced_calls: 1 } : { rev: 1 },
    };
    if (cost !== null) update.$push = { costs: cost };
    if (events.length > 0) update = withOutbox(update, ...events);
    // No projection: FerretDB v1 refuses one on findOneAndUpdate.
    const moved = await this.pipelines.findOneAndUpdate(filter, update, { returnDocument: 'after' });
    if (!moved) return null;
    const after = record(moved);
    this.remember(after);
    return after;
  }

  async countLate(id: number, requestId: string, cost: string | null, unpriced: boolean): Promise<boolean> {
    const counted = `counted.${requestId}`;
    const update: Record<string, unknown> = {
      $set: { [counted]: { cost, unpriced, late: true }, updated_at: new Date() },
      $inc: unpriced ? { rev: 1, unpriced_calls: 1 } : { rev: 1 },
    };
    if (cost !== null) update.$push = { costs: cost };
    const moved = await this.pipelines.updateOne({ _id: id, [counted]: null }, update);
    // A remembered copy is stale now (its rev): the next result of this pipeline reads it again.
    this.forget(id);
    return moved.modifiedCount === 1;
  }

  async hasOrigin(origin: string): Promise<boolean> {
    return (await this.pipelines.findOne({ origin }, { projection: { _id: 1 } })) !== null;
  }

  supersedeOlder(serviceItemId: number, run: number, by: number): Promise<void> {
    // A remembered copy of a marked run is stale by its rev: its result's move fails and reads again.
    return this.itemRuns.supersedeOlder(serviceItemId, run, by);
  }

  unsupersede(serviceItemId: number, by: number): Promise<void> {
    return this.itemRuns.unsupersede(serviceItemId, by);
  }

  async withdraw(
    id: number,
    stage: Stage,
    requestId: string,
    written: Envelope[],
    by: number,
    error: string,
  ): Promise<boolean> {
    const now = new Date();
    const moved = await this.pipelines.updateOne(
      {
        _id: id,
        superseded_by: { $exists: false },
        [`stages.${stage}.state`]: 'SCHEDULED',
        [`stages.${stage}.request_id`]: requestId,
        [OUTBOX_FIELD]: written,
      },
      {
        $set: {
          superseded_by: by,
          [`stages.${stage}.state`]: 'FAILED',
          [`stages.${stage}.error`]: error,
          [`stages.${stage}.finished_at`]: now,
          [`stages.${stage}.superseded`]: true,
          [OUTBOX_FIELD]: [],
          [OUTBOX_PENDING_FIELD]: false,
          updated_at: now,
        },
        $inc: { rev: 1 },
      },
    );
    this.forget(id);
    return moved.modifiedCount === 1;
  }

  async supersede(id: number, by: number): Promise<boolean> {
    const moved = await this.pipelines.findOneAndUpdate(
      {
        _id: id,
        superseded_by: { $exists: false },
        $or: STAGES.map((stage) => ({ [`stages.${stage}.state`]: { $in: [...RUNNING_STATES] } })),
      },
      { $set: { superseded_by: by, updated_at: new Date() }, $inc: { rev: 1 } },
      { returnDocument: 'after' },
    );
    // A remembered copy is stale now: the next result of this pipeline reads it again.
    this.forget(id);
    return moved !== null;
  }

  async cancelRuns(serviceItemId: number, cancelled: RunCancellation): Promise<void> {
    const ids = await this.cancelledRuns.cancelRuns(serviceItemId, cancelled);
    for (const id of ids) this.forget(id);
  }

  async cancelStarted(
    id: number,
    stage: Stage,
    requestId: string,
    written: Envelope[],
    cancelled: RunCancellation,
  ): Promise<void> {
    await this.cancelledRuns.cancelStarted(id, stage, requestId, written, cancelled);
    this.forget(id);
  }

  async savePackData(data: PackDataRecord): Promise<void> {
    await insertAll(this.packData, [data]);
  }

  listLatest(filter: LatestFilter, limit: number, start: PageStart): Promise<Page<PipelineRecord>> {
    const query: Record<string, unknown> = { latest: true };
    if (filter.service_ids !== undefined) query.service_id = { $in: [...filter.service_ids] };
    if (filter.status !== undefined) query.status = filter.status;
    return findPage(this.pipelines, query, { sort: { _id: -1 }, limit, ...start, projection: SUMMARY });
  }

  countRunning(): Promise<number> {
    return this.itemRuns.countRunning();
  }
}
