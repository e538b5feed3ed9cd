import type { Metrics } from '@pack/metrics';
import type { PipelineObserver } from './domain/pipelines/pipeline-deps';
import type { SweepObserver } from './domain/sweeping/sweeper';

/** The names deploy/grafana and deploy/prometheus/rules use (issue 10 item 9). */
export function pipelineMetrics(metrics: Metrics, countRunning: () => Promise<number>): PipelineObserver {
  const transitions = metrics.counter(
    'pipeline_stage_transitions_total',
    'Pipeline stage moves by stage and the state entered',
    ['stage', 'state'],
  );
  const duration = metrics.histogram(
    'pipeline_stage_duration_seconds',
    'Time from a stage being scheduled to its OK or FAILED, by stage and outcome',
    ['stage', 'outcome'],
    [0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600],
  );
  metrics.gauge(
    'pipelines_running',
    'Pipelines with a stage scheduled or waiting for its response',
    [],
    async (gauge) => {
      gauge.set(await countRunning());
    },
  );
  return {
    transition: (stage, state) => transitions.inc({ stage, state }),
    finished: (stage, outcome, seconds) => duration.observe({ stage, outcome }, seconds),
  };
}

/** The stage timeout sweeper's work (docs/decisions/0028). */
export function sweepMetrics(metrics: Metrics): SweepObserver {
  const sweeps = metrics.counter('pipeline_sweeps_total', 'Stage timeout sweeps this replica ran');
  const timedOut = metrics.counter(
    'pipeline_stages_timed_out_total',
    'Stages this replica failed for running past every attempt of their call plus the margin',
    ['stage'],
  );
  const resent = metrics.counter(
    'pipeline_stage_requests_resent_total',
    'Stage requests this replica sent again for want of a result (a crashed llm-gateway)',
    ['stage'],
  );
  return {
    swept: () => sweeps.inc(),
    timedOut: (stage) => timedOut.inc({ stage }),
    resent: (stage) => resent.inc({ stage }),
  };
}
