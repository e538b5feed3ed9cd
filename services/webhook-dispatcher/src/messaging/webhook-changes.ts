import { correlationId, on, type Broker, type ConsumerSpec } from '@pack/broker';
import { createEnvelope, events } from '@pack/contracts';
import type { WebhookChange, WebhookChanges } from '../domain/webhooks/webhook-lookup';

export const WEBHOOK_CHANGES_CONSUMER = 'webhook-dispatcher.webhook-changes';

/**
 * Every replica hears every webhook write (its own too) and forgets its cached webhooks of the
 * Service. The queue is this connection's own: announcements made while the replica is
 * disconnected are lost, so the caches are cleared whenever the broker is ready again
 * (`forgetOnReconnect`).
 */
export function webhookChangesConsumer(changes: WebhookChanges): ConsumerSpec {
  return {
    name: WEBHOOK_CHANGES_CONSUMER,
    broadcast: true,
    prefetch: 100,
    handlers: [on(events.webhookChanged, async (data) => changes.heard(data))],
  };
}

/** Publishes a webhook write with a broker confirm: it is in every replica's queue when this resolves. */
export function announceWebhookChange(broker: Broker, source: string) {
  return (change: WebhookChange): Promise<void> =>
    broker.publish(createEnvelope(events.webhookChanged, change, { source, correlationId: correlationId() }));
}

/**
 * The broker becomes ready after every consumer, the broadcast queue included, is bound: from
 * then on no announcement is missed, so whatever was cached before goes.
 */
export function forgetOnReconnect(broker: Broker, changes: WebhookChanges): () => void {
  return broker.onReady(() => changes.forgetAll());
}
