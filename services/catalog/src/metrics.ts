import type { Metrics } from '@pack/metrics';

/**
 * The catalog's own metrics (the HTTP, broker, outbox and database ones are every service's,
 * registered by packages/runtime). Every service names its metrics in its `src/metrics.ts`.
 */
export function catalogMetrics(metrics: Metrics) {
  const settingsApplied = metrics.counter(
    'settings_applied_total',
    'General settings documents this replica has applied',
  );
  return { settingsApplied: () => settingsApplied.inc() };
}
