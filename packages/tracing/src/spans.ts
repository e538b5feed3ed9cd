import {
  context,
  propagation,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Attributes,
  type Context,
  type Link,
  type Span,
} from '@opentelemetry/api';
import { redactText } from '@pack/logging';

export { SpanKind, SpanStatusCode, trace, context, type Span, type Context, type Attributes };

/** W3C Trace Context as it travels in an event (CloudEvents distributed-tracing extension) or a record. */
export interface TraceCarrier {
  traceparent?: string;
  tracestate?: string;
}

const tracer = () => trace.getTracer('@pack/platform');

/** The trace context of `ctx` (the active one by default) as traceparent/tracestate; empty when tracing is off. */
export function carrierOf(ctx: Context = context.active()): TraceCarrier {
  const headers: Record<string, string> = {};
  propagation.inject(ctx, headers);
  const carrier: TraceCarrier = {};
  if (headers.traceparent) carrier.traceparent = headers.traceparent;
  if (headers.tracestate) carrier.tracestate = headers.tracestate;
  return carrier;
}

/** The context a carrier (event, stored record, request headers) names, on top of no other. */
export function contextOf(carrier: TraceCarrier | Record<string, unknown> | undefined): Context {
  if (!carrier) return ROOT_CONTEXT;
  const { traceparent, tracestate } = carrier as Record<string, unknown>;
  if (typeof traceparent !== 'string') return ROOT_CONTEXT;
  return propagation.extract(ROOT_CONTEXT, {
    traceparent,
    ...(typeof tracestate === 'string' ? { tracestate } : {}),
  });
}

/** A link to the span a carrier names (a taken-over call links to the trace it belongs to). */
export function linkTo(carrier: TraceCarrier | undefined): Link[] {
  const spanContext = trace.getSpanContext(contextOf(carrier));
  return spanContext ? [{ context: spanContext }] : [];
}

export interface InSpanOptions {
  kind?: SpanKind;
  attributes?: Attributes;
  /** The parent (default: the active context). */
  parent?: Context;
  links?: Link[];
}

/** Marks a span failed with the error's (redacted) message. */
export function failSpan(span: Span, error: unknown): void {
  const message = redactText(error instanceof Error ? error.message : String(error));
  span.recordException({ name: error instanceof Error ? error.name : 'Error', message });
  span.setStatus({ code: SpanStatusCode.ERROR, message });
}

/** Runs `fn` in a new active span, ended when it settles (failed when it throws). */
export function inSpan<T>(name: string, options: InSpanOptions, fn: (span: Span) => Promise<T>): Promise<T> {
  const { parent = context.active(), ...spanOptions } = options;
  return tracer().startActiveSpan(name, spanOptions, parent, async (span) => {
    try {
      return await fn(span);
    } catch (error) {
      failSpan(span, error);
      throw error;
    } finally {
      span.end();
    }
  });
}

/** Starts a span (not made active): for work whose end is seen elsewhere (an HTTP response). */
export function startSpan(name: string, options: InSpanOptions): Span {
  const { parent = context.active(), ...spanOptions } = options;
  return tracer().startSpan(name, spanOptions, parent);
}

/** The `traceparent` of a span (empty when it is not recorded: tracing off or not sampled). */
export function traceparentOf(span: Span): string | undefined {
  const spanContext = span.spanContext();
  if (!trace.isSpanContextValid(spanContext)) return undefined;
  return `00-${spanContext.traceId}-${spanContext.spanId}-0${(spanContext.traceFlags & 1).toString(16)}`;
}

/**
 * Whether prompts and completions are recorded on LLM spans (PACK_TRACE_LLM_CONTENT=true; off by
 * default). Even then they go through the redaction of every span attribute.
 */
export function recordsLlmContent(): boolean {
  return process.env.PACK_TRACE_LLM_CONTENT === 'true';
}
