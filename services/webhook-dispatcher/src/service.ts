import { hostname } from 'node:os';
import type { ServiceDefinition } from '@pack/runtime';
import { fieldSecretCodec, keyRingFromEnv } from '@pack/secrets';
import { createTargetDispatcher, targetUrlCheck } from '@pack/net-guard';
import { SettingsCache } from '@pack/settings-client';
import { catalogLookup, catalogService } from './data/catalog-client';
import { RecoveryRepository } from './data/recovery-repository';
import { ResponseRepository } from './data/response-repository';
import { ResponseHealth } from './data/response-health';
import { TargetSender } from './data/target-sender';
import { serviceStoreOf, WebhookRepository } from './data/webhook-repository';
import { Breakers } from './domain/delivery/breakers';
import { Delivery } from './domain/delivery/deliver';
import { Firing, type FiringOptions } from './domain/firing/fire';
import { RecoveryRunner } from './domain/recovery/recovery-runner';
import { ResendFiring } from './domain/recovery/resend-firing';
import { Resends } from './domain/recovery/resends';
import { Responses } from './domain/responses/responses';
import { Scheduler } from './domain/delivery/scheduler';
import { ServicesProjection } from './domain/webhooks/services-projection';
import { Triggers } from './domain/firing/triggers';
import { WebhookById, WebhookChanges, WebhookLookup } from './domain/webhooks/webhook-lookup';
import { WebhookList } from './domain/webhooks/webhook-list';
import { Webhooks } from './domain/webhooks/webhooks';
import { resendRoutes } from './http/resend-routes';
import { webhookRoutes } from './http/routes';
import { changeInstanceConsumer, servicesConsumer } from './messaging/consumers';
import {
  announceWebhookChange,
  forgetOnReconnect,
  webhookChangesConsumer,
} from './messaging/webhook-changes';
import { webhookMetrics } from './metrics';
import { webhookTargetPolicy, type WebhookDispatcherConfig } from './config';

export { webhookDispatcherEnvSchema, type WebhookDispatcherConfig } from './config';
export { RECOVERIES } from './data/recovery-repository';
export { RESPONSES, SCHEDULES } from './data/response-repository';
export { WEBHOOKS } from './data/webhook-repository';
export { CHANGE_INSTANCE_CONSUMER, SERVICES_CONSUMER } from './messaging/consumers';
export { WEBHOOK_CHANGES_CONSUMER } from './messaging/webhook-changes';

const SERVICE = 'webhook-dispatcher';

/** Each secret is bound to its webhook and field, so a ciphertext copied elsewhere does not decrypt. */
export function webhookSecretContext(webhookId: number, field: string): string {
  return `webhooks:${webhookId}.${field}`;
}

export const webhookDispatcherService: ServiceDefinition<WebhookDispatcherConfig> = {
  name: SERVICE,
  version: '0.1.0',
  setup({ config, mongo, logger, metrics, broker }) {
    const webhookRepository = new WebhookRepository(mongo.connection);
    const services = serviceStoreOf(
      webhookRepository,
      catalogService(config.CATALOG_URL, config.PACK_INTERNAL_SECRET, SERVICE),
    );
    const responseRepository = new ResponseRepository(mongo.connection);
    const codec = fieldSecretCodec(keyRingFromEnv(config), {
      context: webhookSecretContext,
      logFields: (id: number, field) => ({ webhook_id: id, field }),
      plaintext: 'refused',
      logger,
    });
    const settings = new SettingsCache({
      settingsUrl: config.SETTINGS_URL,
      internalSecret: config.PACK_INTERNAL_SECRET,
      service: SERVICE,
      logger,
    });
    const externalApi = () => settings.confirmed().external_api;
    const observed = webhookMetrics(metrics);
    settings.onChange(() => observed.settingsApplied(settings.version()));
    const targets = webhookTargetPolicy(config);
    const dispatcher = createTargetDispatcher({ ...targets, connectTimeoutMs: config.WEBHOOK_TIMEOUT_MS });
    const breakers = new Breakers(
      {
        errorThresholdPercentage: config.WEBHOOK_BREAKER_THRESHOLD,
        volumeThreshold: config.WEBHOOK_BREAKER_VOLUME,
        resetTimeoutMs: config.WEBHOOK_BREAKER_RESET_MS,
      },
      observed.breakerState,
    );
    const lookup = new WebhookLookup((serviceId) => webhookRepository.enabledFor(serviceId), {
      ttlMs: config.WEBHOOK_LOOKUP_CACHE_MS,
      listening: () => broker.isReady(),
      observe: observed.lookup,
    });
    const byId = new WebhookById((id) => webhookRepository.find(id));
    const changes = new WebhookChanges(lookup, byId, announceWebhookChange(broker, SERVICE), logger);
    const stopForgetting = forgetOnReconnect(broker, changes);
    const webhooks = new Webhooks(webhookRepository, services, codec, targetUrlCheck(targets), changes);
    const listing = new WebhookList(webhooks, services, new ResponseHealth(mongo.connection));
    const delivery = new Delivery(
      responseRepository,
      webhookRepository,
      new TargetSender(dispatcher),
      breakers,
      codec,
      {
        policy: {
          maxAttempts: config.WEBHOOK_MAX_ATTEMPTS,
          baseDelayMs: config.WEBHOOK_RETRY_BASE_MS,
          maxDelayMs: config.WEBHOOK_RETRY_MAX_MS,
        },
        timeoutMs: config.WEBHOOK_TIMEOUT_MS,
        webhookOf: (id, version) => byId.get(id, version),
        finishedFor: (id) => scheduler.finishedFor(id),
        changes,
        logger,
      },
      observed.deliveryObserver,
    );
    const scheduler: Scheduler = new Scheduler(responseRepository, delivery, {
      concurrency: config.WEBHOOK_CONCURRENCY,
      pollMs: config.WEBHOOK_POLL_MS,
      leaseMs: config.WEBHOOK_LEASE_MS,
      retentionSweepMs: config.WEBHOOK_RETENTION_SWEEP_MS,
      retention: () => externalApi().webhook_response_retention,
      onBacklog: observed.backlog,
      logger,
    });
    const firingOptions: FiringOptions = {
      rateWindowMs: config.WEBHOOK_RATE_WINDOW_MS,
      rateLimit: () => externalApi().webhook_rate_limit_per_minute,
      leaseFor: () => scheduler.leaseFor(),
      unlease: () => scheduler.unlease(),
      deliverNow: (record, webhook) => scheduler.deliverNow(record, webhook),
      dueLater: (due) => scheduler.wake(due.getTime()),
    };
    const firing = new Firing(responseRepository, responseRepository, firingOptions, observed.fireObserver);
    const resendFiring = new ResendFiring(responseRepository, responseRepository, firingOptions);
    const recoveryRepository = new RecoveryRepository(mongo.connection);
    const recoveries = new RecoveryRunner(
      recoveryRepository,
      responseRepository,
      services,
      resendFiring,
      observed.resendObserver,
      {
        concurrency: config.WEBHOOK_RECOVERY_CONCURRENCY,
        batch: config.WEBHOOK_RECOVERY_BATCH,
        leaseMs: config.WEBHOOK_RECOVERY_LEASE_MS,
        pollMs: config.WEBHOOK_RECOVERY_POLL_MS,
        holder: `${hostname()}:${process.pid}`,
        freeSlots: () => scheduler.freeSlots(),
        webhookOf: (id) => webhookRepository.find(id),
        progress: (running, remaining) => observed.recoveryProgress(running, remaining),
        logger,
      },
    );
    const resends = new Resends(
      webhooks,
      services,
      responseRepository,
      recoveryRepository,
      resendFiring,
      recoveries,
      observed.resendObserver,
    );
    const triggers = new Triggers(
      lookup,
      services,
      webhooks,
      firing,
      catalogLookup(config.CATALOG_URL, config.PACK_INTERNAL_SECRET),
    );
    const responses = new Responses(
      responseRepository,
      webhooks,
      webhookRepository,
      responseRepository,
      () => externalApi().webhook_response_rate_limit,
    );
    return {
      routes: [...webhookRoutes(webhooks, listing, triggers, responses), ...resendRoutes(resends)],
      // Broadcast queues first: on a (re)connection they are bound before events flow.
      consumers: [
        settings.consumer(),
        webhookChangesConsumer(changes),
        changeInstanceConsumer(triggers),
        servicesConsumer(new ServicesProjection(services, webhookRepository, changes)),
      ],
      // Nothing is consumed or started on default settings: the first fetch comes first.
      before: settings.firstLoadStep(),
      async onStart() {
        await webhookRepository.ensureIndexes();
        await responseRepository.ensureIndexes();
        await recoveryRepository.ensureIndexes();
        scheduler.start();
        recoveries.start();
        return async () => {
          stopForgetting();
          await recoveries.stop();
          await scheduler.stop();
          settings.stop();
          breakers.shutdown();
          await dispatcher.close();
        };
      },
    };
  },
};
