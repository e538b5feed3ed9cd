/**
 * The `source` of every event the orchestrator writes (stage and side-processor generate requests,
 * a run's progress, processor events, a result routed on to its kind's queue).
 */
export const SOURCE = 'pipeline-orchestrator';
