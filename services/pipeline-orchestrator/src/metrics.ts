import type { Metrics } from '@pack/metrics';
import type { PipelineObserver } from './domain/stage-moves/pipeline-deps';
import type { ValidationObserver } from './domain/side-processors/validator';
import type { SweepObserver } from './domain/sweeping/sweeper';

/** The names deploy/grafana and deploy/prometheus/rules use. */
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

/** Change Instance validations that ended without a decision (docs/decisions/0056). */
export function validationMetrics(metrics: Metrics): ValidationObserver {
  const undecided = metrics.counter(
    'pipeline_validations_undecided_total',
    'Change Instance validations this replica settled without a decision: the reply had none (no_decision) or the call failed (generation_failed)',
    ['cause'],
  );
  return { undecided: (cause) => undecided.inc({ cause }) };
}

/**
 * `pack_service_ai_budget_used_ratio{service_id}`: this month's spend over the limit of every
 * Service with an AI budget, read from the stored spend on each scrape, so every replica reports
 * the same figures (docs/decisions/0046). The label is `service_id`: `service` is every metric's
 * default label naming the process (packages/metrics).
 */
export function budgetMetrics(
  metrics: Metrics,
  ratios: () => Promise<{ service_id: number; ratio: number }[]>,
): void {
  metrics.gauge(
    'pack_service_ai_budget_used_ratio',
    "This UTC month's AI spend of a Service over its monthly limit (1: the limit is reached)",
    ['service_id'],
    async (gauge) => {
      gauge.reset();
      for (const { service_id, ratio } of await ratios())
        gauge.set({ service_id: String(service_id) }, ratio);
    },
  );
}
