import { randomUUID } from 'node:crypto';
import { context, propagation } from '@opentelemetry/api';
import { z } from 'zod';
import { envelopeSchema, type Envelope } from './envelope';
import { events, type EventData, type EventDefinition } from './events';

/** Events on the wire: building an envelope for an event and reading one back. */
const byType = new Map<string, EventDefinition>(Object.values(events).map((d) => [d.type, d]));

export function eventDefinitionFor(type: string): EventDefinition | undefined {
  return byType.get(type);
}

export interface EnvelopeOptions {
  source: string;
  correlationId: string;
  id?: string;
  time?: Date;
}

/**
 * The trace context the event continues: the active one where it is made (a request's, a
 * handler's), so an event written to an outbox carries its writer's trace to the relay and on.
 */
function traceOf(): { traceparent?: string; tracestate?: string } {
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return {
    ...(carrier.traceparent ? { traceparent: carrier.traceparent } : {}),
    ...(carrier.tracestate ? { tracestate: carrier.tracestate } : {}),
  };
}

/** Builds a CloudEvents envelope; the payload is validated against the event's schema. */
export function createEnvelope<D extends EventDefinition>(
  definition: D,
  data: EventData<D>,
  options: EnvelopeOptions,
): Envelope<EventData<D>> {
  return {
    specversion: '1.0',
    id: options.id ?? randomUUID(),
    source: options.source,
    type: definition.type,
    time: (options.time ?? new Date()).toISOString(),
    datacontenttype: 'application/json',
    correlationid: options.correlationId,
    ...traceOf(),
    data: definition.schema.parse(data) as EventData<D>,
  };
}

export type ParseResult = { ok: true; envelope: Envelope } | { ok: false; reason: string };

/** Validates an incoming message: the envelope, a known type and the payload for that type. */
export function parseEnvelope(raw: unknown): ParseResult {
  const envelope = envelopeSchema.safeParse(raw);
  if (!envelope.success) return { ok: false, reason: `invalid envelope: ${z.prettifyError(envelope.error)}` };
  const definition = byType.get(envelope.data.type);
  if (!definition) return { ok: false, reason: `unknown event type ${envelope.data.type}` };
  const data = definition.schema.safeParse(envelope.data.data);
  if (!data.success)
    return { ok: false, reason: `invalid ${definition.type} payload: ${z.prettifyError(data.error)}` };
  return { ok: true, envelope: { ...envelope.data, data: data.data } };
}
