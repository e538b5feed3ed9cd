import type { Stage } from '@pack/contracts';
import type { PackDataRecord, PipelineRecord } from '../records/pipeline-records';

/**
 * The history entry of the PackData a move is about to replace on `stage` (a new attempt clears
 * it, a push overwrites it), or null when the stage holds none of this run's own: the stage keeps
 * its latest PackData and `pack_data` the ones replaced (docs/decisions/0062), so a result's
 * PackData costs no write of its own. Keyed as the attempt's result or push keyed it, so a
 * repeat after a crash between this entry and the move adds nothing. A stage carried from an
 * earlier run (attempt 0) keeps its data in that run's pipeline.
 */
export function replacedPackData(pipeline: PipelineRecord, stage: Stage, now: Date): PackDataRecord | null {
  const current = pipeline.stages[stage];
  if (current.pack_data_json === null || current.attempt === 0) return null;
  const id =
    current.origin === 'pushed'
      ? `pipeline-${pipeline._id}-${stage}-${current.attempt}-pushed`
      : current.request_id;
  if (id === null) return null;
  return {
    _id: id,
    pipeline_id: pipeline._id,
    service_item_id: pipeline.service_item_id,
    stage,
    data_json: current.pack_data_json,
    gen_ui_json: current.gen_ui_json,
    gen_ui_valid: current.gen_ui_valid,
    created_at: current.finished_at ?? now,
  };
}
