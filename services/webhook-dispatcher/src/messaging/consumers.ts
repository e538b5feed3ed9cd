import { on, type ConsumerSpec } from '@pack/broker';
import { events } from '@pack/contracts';
import type { ServicesProjection } from '../domain/webhooks/services-projection';
import type { Triggers } from '../domain/firing/triggers';

export const CHANGE_INSTANCE_CONSUMER = 'webhook-dispatcher.change-instances';
export const SERVICES_CONSUMER = 'webhook-dispatcher.services';

/**
 * The handler returns once every fire the event causes is written (a redelivered event finds its
 * fires by id and adds none), so acknowledging it can lose nothing; sending happens afterwards.
 */
export function changeInstanceConsumer(triggers: Triggers): ConsumerSpec {
  return {
    name: CHANGE_INSTANCE_CONSUMER,
    prefetch: 50,
    handlers: [
      on(events.changeInstanceCreated, (data, envelope) =>
        triggers.changeInstanceCreated(data, envelope.id, new Date(envelope.time)),
      ),
      on(events.changeInstanceStateChanged, (data, envelope) =>
        triggers.changeInstanceStateChanged(data, envelope.id, new Date(envelope.time)),
      ),
    ],
  };
}

/** Versions make applying an event twice or out of order harmless. */
export function servicesConsumer(projection: ServicesProjection): ConsumerSpec {
  return {
    name: SERVICES_CONSUMER,
    handlers: [on(events.serviceChanged, (data) => projection.apply(data))],
  };
}
