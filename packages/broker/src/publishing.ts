import type { Options } from 'amqplib';
import type { Envelope } from '@pack/contracts';
import { SpanKind, type InSpanOptions } from '@pack/tracing';

/** The producer span of one event's publish (OpenTelemetry messaging conventions). */
export function publishSpan(
  exchange: string,
  envelope: Envelope,
  parent: InSpanOptions['parent'],
): InSpanOptions {
  return {
    kind: SpanKind.PRODUCER,
    parent,
    attributes: {
      'messaging.system': 'rabbitmq',
      'messaging.operation.type': 'send',
      'messaging.destination.name': exchange,
      'messaging.rabbitmq.destination.routing_key': envelope.type,
      'messaging.message.id': envelope.id,
      'cloudevents.event_type': envelope.type,
    },
  };
}

/** The AMQP properties an event is published with: persistent, its id, type and correlation id. */
export function eventProperties(envelope: Envelope, service: string): Options.Publish {
  return {
    persistent: true,
    mandatory: true,
    messageId: envelope.id,
    type: envelope.type,
    contentType: 'application/cloudevents+json',
    timestamp: Math.floor(Date.parse(envelope.time) / 1000),
    appId: service,
    headers: { correlationid: envelope.correlationid },
  };
}
