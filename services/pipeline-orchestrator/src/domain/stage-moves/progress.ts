import { createEnvelope, events, STAGES, type Envelope, type EventData, type Stage } from '@pack/contracts';
import type { PipelineRecord, StageRecord } from '../records/pipeline-records';
import { SOURCE } from '../records/source';

export type Progress = EventData<typeof events.pipelineProgress>['state'];

/** Room for the moves of one run inside its version range (a run has far fewer). */
const MOVES_PER_RUN = 100_000;

/**
 * The version of a progress of `pipeline` as it is after the move that reports it: runs in order,
 * and within a run every stage start adds two (its start even, its end odd). A later run, or a
 * later move of the same run, always has a greater version; the same move always the same one
 * (a redelivered or replayed event is a repeat). docs/decisions/0026.
 */
export function progressVersion(pipeline: PipelineRecord, progress: Progress): number {
  const starts = STAGES.reduce((sum, stage) => sum + pipeline.stages[stage].attempt, 0);
  return pipeline.run * MOVES_PER_RUN + 2 * starts + (progress === 'IN_PROGRESS' ? 0 : 1);
}

/**
 * The progress event for the Change Instance the pipeline runs for, written with the move that
 * makes it (the pipeline's own outbox); none for a pipeline without a Change Instance (one started
 * before the orchestrator knew approvals' instances).
 */
export function progressEvents(
  pipeline: PipelineRecord,
  progress: Progress,
  reasons: string[] = [],
): Envelope[] {
  const changeInstanceId = pipeline.change_instance_id;
  if (changeInstanceId === undefined || changeInstanceId === null) return [];
  const version = progressVersion(pipeline, progress);
  return [
    createEnvelope(
      events.pipelineProgress,
      {
        change_instance_id: changeInstanceId,
        service_item_id: pipeline.service_item_id,
        pipeline_id: pipeline._id,
        run: pipeline.run,
        state: progress,
        reasons,
        version,
      },
      {
        source: SOURCE,
        correlationId: `pipeline-${pipeline._id}`,
        id: `progress-${pipeline._id}-${version}`,
      },
    ),
  ];
}

/** The pipeline as a move setting `set` (stage fields by stage) leaves it. */
export function withStages(
  pipeline: PipelineRecord,
  set: Partial<Record<Stage, Partial<StageRecord>>>,
): PipelineRecord {
  const stages = Object.fromEntries(STAGES.map((name) => [name, { ...pipeline.stages[name], ...set[name] }]));
  return { ...pipeline, stages: stages as PipelineRecord['stages'] };
}
