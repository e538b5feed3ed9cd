import {
  Counter,
  Gauge,
  Histogram,
  Registry,
  collectDefaultMetrics,
  type OpenMetricsContentType,
} from 'prom-client';

export { Counter, Gauge, Histogram, Registry } from 'prom-client';

const LINT_FAILING_DEFAULTS = [
  'nodejs_active_handles_total',
  'nodejs_active_requests_total',
  'nodejs_active_resources_total',
];

/** One registry per service instance (tests run several services in one process). */
export function createMetrics(service: string) {
  const registry = new Registry();
  registry.setDefaultLabels({ service });
  collectDefaultMetrics({ register: registry });
  // Gauges named like counters fail `promtool check metrics`; the per-type gauges beside them
  // (nodejs_active_handles{type}, ...) hold the same figures, summed.
  for (const name of LINT_FAILING_DEFAULTS) registry.removeSingleMetric(name);

  // prom-client writes exemplars only in the OpenMetrics format (and only from an OpenMetrics
  // registry), which would also rename every counter (`x_total` -> `x_total_total`): the latency
  // histogram is kept a second time, with the trace id of a sampled request as its exemplar, in
  // this registry served at /metrics/exemplars (docs/decisions/0047); /metrics is unchanged.
  const exemplars = new Registry<OpenMetricsContentType>();
  exemplars.setContentType(Registry.OPENMETRICS_CONTENT_TYPE);
  exemplars.setDefaultLabels({ service });
  const duration = {
    name: 'http_request_duration_seconds',
    help: 'HTTP request duration by route template, method and status',
    labelNames: ['method', 'route', 'status_code'] as const,
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
  };
  const httpDuration = new Histogram({ ...duration, registers: [registry] });
  const withExemplars = new Histogram({ ...duration, registers: [exemplars], enableExemplars: true });

  return {
    registry,
    /** The latency histograms in the OpenMetrics format, with trace ids as exemplars. */
    exemplars,
    httpDuration,
    /** One request's duration; `traceId` (of a sampled request) becomes the bucket's exemplar. */
    observeHttp(
      labels: Record<'method' | 'route' | 'status_code', string>,
      seconds: number,
      traceId?: string,
    ) {
      httpDuration.observe(labels, seconds);
      withExemplars.observe({
        labels,
        value: seconds,
        ...(traceId ? { exemplarLabels: { trace_id: traceId } as never } : {}),
      });
    },
    counter<L extends string>(name: string, help: string, labelNames: readonly L[] = []) {
      return new Counter<L>({ name, help, labelNames, registers: [registry] });
    },
    /** `collect` runs on every scrape (values read then, e.g. a queue's depth), and may be async. */
    gauge<L extends string>(
      name: string,
      help: string,
      labelNames: readonly L[] = [],
      collect?: (gauge: Gauge<L>) => void | Promise<void>,
    ) {
      return new Gauge<L>({
        name,
        help,
        labelNames,
        registers: [registry],
        ...(collect
          ? {
              collect(this: Gauge<L>) {
                return collect(this);
              },
            }
          : {}),
      });
    },
    histogram<L extends string>(
      name: string,
      help: string,
      labelNames: readonly L[] = [],
      buckets?: number[],
    ) {
      return new Histogram<L>({
        name,
        help,
        labelNames,
        registers: [registry],
        ...(buckets ? { buckets } : {}),
      });
    },
  };
}
export type Metrics = ReturnType<typeof createMetrics>;
