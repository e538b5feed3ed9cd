import type { Metrics } from '@pack/metrics';

/**
 * The settings service's own metrics (the HTTP, broker, outbox and database ones are every
 * service's, registered by packages/runtime). Every service names its metrics in its
 * `src/metrics.ts`.
 */
export function settingsMetrics(metrics: Metrics, currentCurrency: () => Promise<string | undefined>) {
  // The unit of every cost on the dashboards (prices are taken to be in this currency).
  metrics.gauge(
    'settings_currency_info',
    'The Currency setting: 1 on the series labelled with the current currency',
    ['currency'],
    async (gauge) => {
      const currency = await currentCurrency();
      gauge.reset();
      if (currency !== undefined) gauge.set({ currency }, 1);
    },
  );
}
