import { costOf, isUnpriced } from '@pack/llm-providers';
import type { Metrics } from '@pack/metrics';
import type { GenerationObserver } from './domain/generation/generation';
import type { CallObserver } from './domain/providers/reliable-adapter';
import type { BreakerState } from './domain/providers/reliability';

const LABELS = ['provider', 'model_id'] as const;
const BREAKER_VALUE: Record<BreakerState, number> = { closed: 0, half_open: 1, open: 2 };

/** Provider call metrics, labelled by provider and model id only (bounded cardinality). */
export function llmMetrics(metrics: Metrics) {
  const requests = metrics.counter('llm_requests_total', 'Provider calls (attempts)', LABELS);
  const errors = metrics.counter('llm_errors_total', 'Failed provider calls by error kind', [
    ...LABELS,
    'kind',
  ]);
  const inputTokens = metrics.counter('llm_input_tokens_total', 'Input tokens billed', LABELS);
  const outputTokens = metrics.counter('llm_output_tokens_total', 'Output tokens billed', LABELS);
  const cost = metrics.counter('llm_cost_total', 'Cost of priced calls (approximate: float)', LABELS);
  const retries = metrics.counter('llm_retries_total', 'Retried provider calls', LABELS);
  const latency = metrics.histogram(
    'llm_upstream_latency_seconds',
    'Provider call duration',
    LABELS,
    [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120],
  );
  const breaker = metrics.gauge('llm_breaker_state', 'Circuit breaker: 0 closed, 1 half open, 2 open', [
    'model_id',
  ]);
  const of = (l: { provider: string; model_id: number }) => ({
    provider: l.provider,
    model_id: String(l.model_id),
  });

  const observer: CallObserver = {
    succeeded(labels, ms, { usage }, model) {
      requests.inc(of(labels));
      latency.observe(of(labels), ms / 1000);
      inputTokens.inc(of(labels), usage.input_tokens);
      outputTokens.inc(of(labels), usage.output_tokens);
      const callCost = costOf(usage, model);
      if (!isUnpriced(callCost)) cost.inc(of(labels), Number(callCost));
    },
    failed(labels, ms, kind) {
      requests.inc(of(labels));
      latency.observe(of(labels), ms / 1000);
      errors.inc({ ...of(labels), kind });
    },
    retried: (labels) => retries.inc(of(labels)),
  };
  const breakerState = (modelId: number, state: BreakerState) =>
    breaker.set({ model_id: String(modelId) }, BREAKER_VALUE[state]);

  const generations = metrics.counter('llm_generations_total', 'Generate requests answered', LABELS);
  const failedGenerations = metrics.counter(
    'llm_generation_failures_total',
    'Generate requests answered with an error result',
    LABELS,
  );
  const overhead = metrics.histogram(
    'llm_gateway_overhead_seconds',
    'Time handling a generate request not spent waiting for the provider (claim, records, rollup, publish)',
    LABELS,
    [0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 1],
  );
  const fallbacks = metrics.counter(
    'pack_llm_fallbacks_total',
    'Calls moved from a model (from) to the next of its fallbacks (to), by why',
    ['from', 'to', 'reason'],
  );
  const generation: GenerationObserver = {
    answered(labels, ok, overheadMs) {
      generations.inc(of(labels));
      if (!ok) failedGenerations.inc(of(labels));
      overhead.observe(of(labels), overheadMs / 1000);
    },
    fellBack(from, to, reason) {
      fallbacks.inc({ from: String(from.model_id), to: String(to.model_id), reason });
    },
  };
  return { observer, breakerState, generation };
}
