import { z } from 'zod';

/**
 * CloudEvents 1.0 attributes plus the platform's correlation id extension and the CloudEvents
 * distributed-tracing extension (W3C `traceparent`/`tracestate` of the work that made the event;
 * absent when tracing is off).
 */
export const envelopeSchema = z.object({
  specversion: z.literal('1.0'),
  id: z.string().min(1),
  source: z.string().min(1),
  type: z.string().regex(/^[a-z_]+(\.[a-z_]+)+\.v\d+$/, 'type must look like domain.entity.action.vN'),
  time: z.string().datetime(),
  datacontenttype: z.literal('application/json'),
  correlationid: z.string().min(1),
  traceparent: z.string().max(55).optional(),
  tracestate: z.string().max(512).optional(),
  data: z.unknown(),
});
export type Envelope<T = unknown> = Omit<z.infer<typeof envelopeSchema>, 'data'> & { data: T };

/** A consumer's handler of one event type. */
export type EventHandler<T> = (data: T, envelope: Envelope<T>) => Promise<void>;

/**
 * Wraps a consumer's handler so that an event delivered twice is handled once (a processed-event
 * marker per consumer and event id, packages/db `oncePerEvent`). messaging/ is handed one by the
 * service's wiring, so it needs no database.
 */
export type OncePerEvent = <T>(consumer: string, handler: EventHandler<T>) => EventHandler<T>;
