import type { Connection } from 'mongoose';
import { STAGES } from '@pack/contracts';
import { oneBatch } from '@pack/db';
import { RUNNING_STATES, type PipelineRecord } from '../domain/records/pipeline-records';
import type { SweepStore } from '../domain/sweeping/store';
import { MODELS_COLLECTION } from './directory-repository';
import { PROCESSORS_COLLECTION } from './processor-repository';

/**
 * Top-level flag on a pipeline set by every SCHEDULED move (pipeline-repository.ts) and cleared
 * by the sweeper once nothing runs. FerretDB v1 pushes a top-level scalar equality down to
 * PostgreSQL but not a dotted path (`stages.CONFIG.state`) nor a date range: the sweep's query
 * is this one equality (docs/decisions/0028).
 */
export const WATCHED_FIELD = 'watched';

/** A pipeline none of whose stages runs (SCHEDULED or WAITING_FOR_RESPONSE): nothing to sweep. */
export const IDLE: Record<string, unknown> = Object.fromEntries(
  STAGES.map((stage) => [`stages.${stage}.state`, { $nin: [...RUNNING_STATES] }]),
);

const STAGE_FIELDS = ['state', 'request_id', 'processor_id', 'started_at', 'resends', 'resent_at'] as const;
const PROJECTION = Object.fromEntries(
  STAGES.flatMap((stage) => STAGE_FIELDS.map((field) => [`stages.${stage}.${field}`, 1])),
);

export class SweepRepository implements SweepStore {
  private readonly pipelines;

  constructor(
    private readonly connection: Connection,
    collection: string,
  ) {
    this.pipelines = connection.collection<PipelineRecord>(collection);
  }

  async ensureIndexes(): Promise<void> {
    await this.pipelines.createIndex({ [WATCHED_FIELD]: 1 }, { name: WATCHED_FIELD });
  }

  /**
   * The first page by the `watched` equality alone: FerretDB v1 reads it through the index and
   * sorts the few watched documents itself (11 ms at 100,000 pipelines, 50 watched), where a
   * filter with the id range is a scan of the whole collection (54-72 ms there, growing with
   * the pipelines). The sort names `watched` too: a sort on `_id` alone goes to PostgreSQL, which
   * then walks the whole `_id` index whenever fewer than `limit` are watched. A later page (more
   * than `limit` running) needs the range; the same order on MongoDB.
   */
  watched(afterId: number, limit: number): Promise<PipelineRecord[]> {
    const after = afterId > 0 ? { _id: { $gt: afterId } } : {};
    return this.pipelines
      .find(
        { [WATCHED_FIELD]: true, ...after },
        { projection: PROJECTION, sort: { [WATCHED_FIELD]: 1, _id: 1 }, limit, ...oneBatch(limit) },
      )
      .toArray();
  }

  async unwatch(id: number): Promise<boolean> {
    const result = await this.pipelines.updateOne(
      { _id: id, [WATCHED_FIELD]: true, ...IDLE },
      { $set: { [WATCHED_FIELD]: false } },
    );
    return result.modifiedCount === 1;
  }

  async modelTimeouts(processorIds: readonly number[]): Promise<Map<number, readonly number[]>> {
    if (processorIds.length === 0) return new Map();
    const processors = await this.connection
      .collection<{ _id: number; llm_model_id: number }>(PROCESSORS_COLLECTION)
      .find(
        { _id: { $in: [...processorIds] } },
        { projection: { llm_model_id: 1 }, ...oneBatch(processorIds.length) },
      )
      .toArray();
    const models = this.connection.collection<{ _id: number; timeout: number; fallback_models?: number[] }>(
      MODELS_COLLECTION,
    );
    const read = (ids: Iterable<number>) => {
      const unique = [...new Set(ids)];
      return models
        .find(
          { _id: { $in: unique } },
          { projection: { timeout: 1, fallback_models: 1 }, ...oneBatch(unique.length) },
        )
        .toArray();
    };
    const known = new Map(
      (await read(processors.map((p) => p.llm_model_id))).map((model) => [model._id, model]),
    );
    // The fallbacks' timeouts too: one more query, only when some model has fallbacks.
    const fallbacks = [...known.values()].flatMap((model) => model.fallback_models ?? []);
    const missing = fallbacks.filter((id) => !known.has(id));
    if (missing.length > 0) for (const model of await read(missing)) known.set(model._id, model);
    const found = new Map<number, readonly number[]>();
    for (const processor of processors) {
      const model = known.get(processor.llm_model_id);
      if (!model) continue;
      const chain = (model.fallback_models ?? []).flatMap((id) => {
        const fallback = known.get(id);
        return fallback ? [fallback.timeout] : [];
      });
      found.set(processor._id, [model.timeout, ...chain]);
    }
    return found;
  }
}
