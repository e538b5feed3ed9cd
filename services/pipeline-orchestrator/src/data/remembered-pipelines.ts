import { BoundedCache } from '@pack/cache';
import { STAGES } from '@pack/contracts';
import { runningStages, type PipelineRecord } from '../domain/records/pipeline-records';

/** What a replica may hold of the running pipelines it wrote, in characters of their JSON texts. */
const BUDGET = 8 * 1024 * 1024;
/** A pipeline bigger than this is not kept: its result reads it from the database. */
const LARGEST = 512 * 1024;
const OVERHEAD = 2048;

/** Roughly what a pipeline holds: its JSON texts (declaration, context, PackData, UI, errors). */
function sizeOf(pipeline: PipelineRecord): number {
  let size = OVERHEAD + pipeline.declaration_json.length + (pipeline.execution_context?.length ?? 0);
  for (const stage of STAGES) {
    const record = pipeline.stages[stage];
    size += (record.pack_data_json?.length ?? 0) + (record.gen_ui_json?.length ?? 0);
    size += record.error?.length ?? 0;
  }
  return size;
}

/**
 * The running pipelines this replica last wrote, the least recently used dropped first within a
 * memory budget (PipelineRepository.recent, docs/decisions/0028); no time to live: every write of
 * this replica replaces its entry. A pipeline with no stage running is dropped: no result will
 * ask for it.
 */
export class RememberedPipelines {
  private readonly entries = new BoundedCache<number, PipelineRecord>({
    // The budget bounds the count too: every pipeline costs at least OVERHEAD.
    maxEntries: Math.floor(BUDGET / OVERHEAD),
    ttlMs: Infinity,
    maxSize: BUDGET,
    sizeOf,
  });

  get(id: number): PipelineRecord | null {
    return this.entries.get(id) ?? null;
  }

  forget(id: number): void {
    this.entries.delete(id);
  }

  keep(pipeline: PipelineRecord): void {
    this.forget(pipeline._id);
    if (runningStages(pipeline).length === 0 || sizeOf(pipeline) > LARGEST) return;
    this.entries.set(pipeline._id, pipeline);
  }

  /** Characters held (for tests). */
  get size(): number {
    return this.entries.heldSize;
  }
}
