import type { Metrics } from '@pack/metrics';
import type { BreakerState } from './domain/delivery/breakers';
import type { DeliveryObserver } from './domain/delivery/deliver';
import type { FireObserver } from './domain/firing/fire';
import type { ResendObserver, ResendReason } from './domain/recovery/resends';
import type { LookupResult } from './domain/webhooks/webhook-lookup';

const BREAKER_VALUE: Record<BreakerState, number> = { closed: 0, half_open: 1, open: 2 };

/** Webhook metrics; labels are bounded (modes, outcomes; the breaker gauge by webhook id). */
export function webhookMetrics(metrics: Metrics) {
  const fires = metrics.counter('webhook_fires_total', 'Fires (new Webhook Responses) by mode', ['mode']);
  const delayed = metrics.counter(
    'webhook_fires_delayed_total',
    'Fires the rate limit moved to a later window',
  );
  const merged = metrics.counter('webhook_triggers_merged_total', 'Triggers merged into an open wait window');
  const suppressed = metrics.counter(
    'webhook_triggers_suppressed_total',
    'Triggers suppressed by the cooling time',
  );
  const deliveries = metrics.counter('webhook_deliveries_total', 'Delivery steps by outcome', ['outcome']);
  const attempts = metrics.counter('webhook_attempts_total', 'Requests sent to webhook targets');
  const latency = metrics.histogram(
    'webhook_delivery_latency_seconds',
    'From the triggering event to the final answer of the target',
    [],
    [0.005, 0.01, 0.025, 0.05, 0.08, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300],
  );
  const breaker = metrics.gauge(
    'webhook_breaker_state',
    'Circuit breaker per webhook: 0 closed, 1 half open, 2 open',
    ['webhook_id'],
  );
  const backlog = metrics.gauge('webhook_scheduled_backlog', 'Fires in SCHEDULED (all replicas)');
  const lookups = metrics.counter(
    'webhook_lookups_total',
    "Lookups of a Service's enabled webhooks for an event: hit, miss (a query), shared (joined a query under way), bypass (cache off or broker not ready)",
    ['result'],
  );
  const resends = metrics.counter(
    'pack_webhook_resends_total',
    'Resends recorded (new Webhook Responses that resend another): manual (one response) or recovery',
    ['reason'],
  );
  const recoveriesRunning = metrics.gauge(
    'pack_webhook_recoveries_running',
    'Recoveries RUNNING (all replicas; reported by replicas that run recoveries)',
  );
  const recoveryRemaining = metrics.gauge(
    'pack_webhook_recovery_remaining',
    'FAILED fires the running recoveries still have to resend (all replicas)',
  );
  const settingsApplied = metrics.counter(
    'settings_applied_total',
    'General settings documents this replica has applied',
  );
  const settingsVersion = metrics.gauge(
    'settings_version',
    'Version of the general settings this replica applies',
  );

  const fireObserver: FireObserver = {
    fired(mode, wasDelayed) {
      fires.inc({ mode });
      if (wasDelayed) delayed.inc();
    },
    merged: () => merged.inc(),
    suppressed: () => suppressed.inc(),
  };
  const deliveryObserver: DeliveryObserver = {
    attempted: () => attempts.inc(),
    finished(outcome, latencyMs) {
      deliveries.inc({ outcome });
      if (latencyMs !== null) latency.observe(latencyMs / 1000);
    },
  };
  return {
    fireObserver,
    deliveryObserver,
    breakerState: (webhookId: number, state: BreakerState) =>
      breaker.set({ webhook_id: String(webhookId) }, BREAKER_VALUE[state]),
    backlog: (count: number) => backlog.set(count),
    lookup: (result: LookupResult) => lookups.inc({ result }),
    resendObserver: {
      resent: (reason: ResendReason, count: number) => {
        if (count > 0) resends.inc({ reason }, count);
      },
    } satisfies ResendObserver,
    recoveryProgress(running: number, remaining: number) {
      recoveriesRunning.set(running);
      recoveryRemaining.set(remaining);
    },
    settingsApplied(version: number) {
      settingsApplied.inc();
      settingsVersion.set(version);
    },
  };
}
