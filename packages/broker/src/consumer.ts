import { contextOf, inSpan, SpanKind } from '@pack/tracing';
import { envelopeSchema, type Envelope, type EventData, type EventDefinition } from '@pack/contracts';
import { runWithContext, type Logger } from '@pack/logging';
import { BrokerUnavailableError } from './confirm';

/** What a handler receives: the payload parsed by its event's schema, and the envelope around it. */
export type EventHandlerFn<T> = (data: T, envelope: Envelope<T>) => Promise<void>;

type Accepted = { ok: true; run: () => Promise<void> } | { ok: false; reason: string };

/** One event type a consumer handles. Built with `on()`, which keeps the payload typed. */
export interface EventHandler {
  readonly event: EventDefinition;
  /** Validates the payload against the event's schema and, if it fits, returns the work to run. */
  readonly accept: (envelope: Envelope) => Accepted;
}

/** `on(events.settingsChanged, async (data) => ...)`: `data` is the event's parsed, typed payload. */
export function on<D extends EventDefinition>(event: D, handle: EventHandlerFn<EventData<D>>): EventHandler {
  const schema: D['schema'] = event.schema;
  return {
    event,
    accept(envelope) {
      const parsed = schema.safeParse(envelope.data);
      if (!parsed.success) {
        const issues = parsed.error.issues.map(
          (issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`,
        );
        return { ok: false, reason: `invalid ${event.type} payload: ${issues.join('; ')}` };
      }
      const data: EventData<D> = parsed.data;
      return { ok: true, run: () => handle(data, { ...envelope, data }) };
    },
  };
}

export interface ConsumerSpec {
  /** Unique per service and purpose, e.g. `webhook-dispatcher.change-instances`; names the queue. */
  name: string;
  /** One per event type; the queue is bound to exactly these types. */
  handlers: readonly EventHandler[];
  /**
   * Event types an earlier version bound this queue to and this one no longer wants: the queue
   * is unbound from them at every start (a durable queue keeps its bindings across versions),
   * and what still comes in on them (messages queued before, or routed by a replica of the
   * earlier version during a rolling upgrade) goes to these handlers instead of the dead letters.
   */
  retired?: readonly EventHandler[];
  prefetch?: number;
  /** Handler attempts before the message goes to the dead-letter queue. */
  maxAttempts?: number;
  retryDelayMs?: number;
  /**
   * Every replica gets every event (cache invalidation), instead of replicas sharing the work.
   * The queue belongs to this connection and disappears with it; a failed handler is logged and
   * the message dropped (such consumers must have another way to catch up, e.g. a periodic fetch).
   */
  broadcast?: boolean;
}

/** The event types a consumer's queue is bound to; two handlers for one type are a mistake. */
export function eventTypes(spec: ConsumerSpec): string[] {
  const types = spec.handlers.map((handler) => handler.event.type);
  const repeated = types.find((type, index) => types.indexOf(type) !== index);
  if (repeated) throw new Error(`consumer ${spec.name} has two handlers for ${repeated}`);
  return types;
}

/** The delivery as the settle logic needs it, and the channel operations it may use. */
export interface Delivery {
  content: Buffer;
  messageId?: string;
  /** Handler attempts made before this one (our retry header). */
  previousAttempts: number;
  ack(): void;
  /** `requeue: false` dead-letters the message (or drops it, without a dead-letter exchange). */
  nack(requeue: boolean): void;
  /** Publishes a copy to the delayed-retry queue with a confirm. */
  retryLater(attempts: number): Promise<void>;
}

/**
 * Thrown by a handler that cannot do its work yet because another worker holds it (a lease):
 * the message goes to the delayed-retry queue without counting as a failed attempt, so waiting
 * never dead-letters it. The holder's lease must be bounded, or this loops for ever.
 */
export class RetryLater extends Error {
  constructor(reason: string) {
    super(reason);
    this.name = 'RetryLater';
  }
}

/** What the handler's result calls for. */
type Decision = 'ack' | 'dropped' | 'invalid' | 'dead_letter' | 'retry' | 'deferred';
/** What happened to the message in the end (a metric label). */
export type DeliveryOutcome = Decision | 'requeued' | 'settle_failed';

type Verdict =
  | { kind: 'handled' }
  | { kind: 'deferred'; reason: string }
  | { kind: 'invalid'; reason: string }
  | { kind: 'failed'; error: unknown; eventId: string };

/**
 * Runs the handler, then settles the message. Settling is kept out of the handler's `try`: an
 * acknowledgement that fails (the channel closed meanwhile) is not a handler failure, so it never
 * schedules a retry of work that succeeded. The broker redelivers such a message by itself, and
 * the consumer's idempotency absorbs that.
 */
export async function deliver(
  spec: ConsumerSpec,
  delivery: Delivery,
  log: Logger,
  transient: (error: unknown) => boolean = () => false,
): Promise<DeliveryOutcome> {
  const attempts = delivery.previousAttempts + 1;
  const verdict = await runHandler(spec, delivery.content, attempts, transient);
  const decision = decide(spec, verdict, attempts, delivery.messageId, log);
  const context = { consumer: spec.name, message_id: delivery.messageId };
  if (decision === 'retry' || decision === 'deferred') {
    try {
      await delivery.retryLater(decision === 'retry' ? attempts : delivery.previousAttempts);
    } catch (error) {
      // Broker trouble: give the message back; the quorum queue's delivery limit bounds the loop.
      log.warn({ err: error, ...context }, 'could not schedule the retry; requeueing');
      try {
        delivery.nack(true);
      } catch {
        // the channel closed: the broker redelivers the unacknowledged message anyway
      }
      return 'requeued';
    }
  }
  try {
    if (decision === 'invalid' || decision === 'dead_letter') delivery.nack(false);
    else delivery.ack();
    return decision;
  } catch (error) {
    log.warn({ err: error, ...context }, 'could not settle the message; the broker will redeliver it');
    return 'settle_failed';
  }
}

function decide(
  spec: ConsumerSpec,
  verdict: Verdict,
  attempts: number,
  messageId: string | undefined,
  log: Logger,
): Decision {
  const consumer = spec.name;
  switch (verdict.kind) {
    case 'handled':
      return 'ack';
    case 'deferred':
      log.debug({ consumer, message_id: messageId, reason: verdict.reason }, 'handler deferred the message');
      return spec.broadcast ? 'dropped' : 'deferred';
    case 'invalid':
      log.warn(
        { consumer, message_id: messageId, reason: verdict.reason },
        'invalid message rejected, not retried',
      );
      return spec.broadcast ? 'dropped' : 'invalid';
    case 'failed': {
      const context = { err: verdict.error, consumer, event_id: verdict.eventId, attempts };
      if (spec.broadcast) {
        log.warn(context, 'broadcast handler failed; message dropped');
        return 'dropped';
      }
      if (attempts >= (spec.maxAttempts ?? 5)) {
        log.error(context, 'handler failed; message dead-lettered');
        return 'dead_letter';
      }
      log.warn(context, 'handler failed; retrying later');
      return 'retry';
    }
  }
}

async function runHandler(
  spec: ConsumerSpec,
  content: Buffer,
  attempts: number,
  transient: (error: unknown) => boolean,
): Promise<Verdict> {
  let raw: unknown;
  try {
    raw = JSON.parse(content.toString('utf8'));
  } catch {
    return { kind: 'invalid', reason: 'message body is not JSON' };
  }
  const parsed = envelopeSchema.safeParse(raw);
  if (!parsed.success) return { kind: 'invalid', reason: 'not a CloudEvents envelope' };
  const envelope = parsed.data;
  const handler = [...spec.handlers, ...(spec.retired ?? [])].find(
    (candidate) => candidate.event.type === envelope.type,
  );
  if (!handler) return { kind: 'invalid', reason: `no handler for ${envelope.type}` };
  const accepted = handler.accept(envelope);
  if (!accepted.ok) return { kind: 'invalid', reason: accepted.reason };
  try {
    // The handler continues the event's trace (its traceparent): one trace per request across
    // the broker, through retries (a retried copy carries the same context; `attempt` tells them apart).
    await inSpan(
      `process ${envelope.type}`,
      {
        kind: SpanKind.CONSUMER,
        parent: contextOf(envelope),
        attributes: {
          'messaging.system': 'rabbitmq',
          'messaging.operation.type': 'process',
          'messaging.consumer.group.name': spec.name,
          'messaging.message.id': envelope.id,
          'cloudevents.event_type': envelope.type,
          'cloudevents.event_source': envelope.source,
          'pack.attempt': attempts,
        },
      },
      () => runWithContext({ correlationId: envelope.correlationid }, accepted.run),
    );
    return { kind: 'handled' };
  } catch (error) {
    if (error instanceof RetryLater) return { kind: 'deferred', reason: error.message };
    // A dependency away for a while (the database restarting, the broker refusing or failing to
    // confirm the handler's publish while a quorum queue elects a leader): waiting is not a
    // failed attempt, so a handler that publishes never burns its attempts on broker trouble.
    if (error instanceof BrokerUnavailableError || transient(error))
      return {
        kind: 'deferred',
        reason: `unavailable: ${error instanceof Error ? error.message : String(error)}`,
      };
    return { kind: 'failed', error, eventId: envelope.id };
  }
}
