import { hostname } from 'node:os';
import { diag } from '@opentelemetry/api';
import { getBooleanFromEnv, getStringListFromEnv } from '@opentelemetry/core';
import { MongoDBInstrumentation } from '@opentelemetry/instrumentation-mongodb';
import { UndiciInstrumentation } from '@opentelemetry/instrumentation-undici';
import { envDetector, processDetector, resourceFromAttributes } from '@opentelemetry/resources';
import { NodeSDK } from '@opentelemetry/sdk-node';
import { BatchSpanProcessor, type SpanExporter } from '@opentelemetry/sdk-trace-base';
// The SDK's own reading of OTEL_TRACES_EXPORTER / OTEL_EXPORTER_* / OTEL_BSP_* (not re-exported
// from its index; the version is pinned in the workspace catalog).
import { getSpanProcessorsFromEnv } from '@opentelemetry/sdk-node/build/src/utils';
import { PackSpanProcessor } from './processor';

/** `host.name` (semantic conventions, incubating). */
const ATTR_HOST_NAME = 'host.name';

export interface Tracing {
  /** False when nothing is exported (no endpoint, no exporter, OTEL_SDK_DISABLED, `none`). */
  enabled: boolean;
  /** Exports every span ended so far. */
  flush(): Promise<void>;
  /** Exports what is pending (bounded by `timeoutMs`), then stops. */
  shutdown(timeoutMs?: number): Promise<void>;
}

/**
 * True when the standard variables ask for export: OTEL_TRACES_EXPORTER names an exporter other
 * than `none`, or an OTLP endpoint is set. With neither, the SDK is not started at all: the
 * OpenTelemetry API stays a no-op (no spans, no context in events), so the cost is noise.
 */
export function tracingWanted(): boolean {
  if (getBooleanFromEnv('OTEL_SDK_DISABLED')) return false;
  const exporters = getStringListFromEnv('OTEL_TRACES_EXPORTER') ?? [];
  if (exporters.length > 0) return !(exporters.length === 1 && exporters[0] === 'none');
  return Boolean(
    process.env.OTEL_EXPORTER_OTLP_ENDPOINT?.trim() || process.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT?.trim(),
  );
}

let current: Tracing | undefined;

/**
 * Starts the OpenTelemetry Node SDK once per process, from the standard OTEL_* variables only
 * (OTEL_SERVICE_NAME defaults to `service`). Must run before the instrumented modules (mongodb,
 * undici) are loaded: each service's main.ts imports its `tracing.ts` first (docs/decisions/0047).
 * A second call returns the first one's result.
 */
export function startTracing(service: string, options: { exporter?: SpanExporter } = {}): Tracing {
  if (current) return current;
  if (!options.exporter && !tracingWanted()) {
    current = { enabled: false, flush: () => Promise.resolve(), shutdown: () => Promise.resolve() };
    return current;
  }
  const serviceName = process.env.OTEL_SERVICE_NAME?.trim() || service;
  // An exporter of the caller's: the test stack's in jest, whose sandbox refuses the dynamic
  // import('http') of the SDK's OTLP exporter (a service process uses the SDK's own).
  const exporting = options.exporter
    ? [new BatchSpanProcessor(options.exporter, { scheduledDelayMillis: 100 })]
    : getSpanProcessorsFromEnv(undefined);
  // Our own trace context in every event is the broker's carrier (CloudEvents traceparent), and
  // our own server span is the runtime's: see decision 0047 for why amqplib/http are not here.
  const instrumentations = [
    new UndiciInstrumentation(),
    // Statements are recorded with their values replaced by `?` (the default).
    new MongoDBInstrumentation(),
  ];
  const sdk = new NodeSDK({
    serviceName,
    spanProcessors: [new PackSpanProcessor(serviceName), ...exporting],
    instrumentations,
    // Traces only: metrics stay Prometheus (packages/metrics), logs stay pino on stdout.
    metricReaders: [],
    logRecordProcessors: [],
    // The host detector reads host.id through a dynamic import, which jest's sandbox refuses
    // (the export then fails); host.name is all we use of it. OTEL_NODE_RESOURCE_DETECTORS wins.
    ...(process.env.OTEL_NODE_RESOURCE_DETECTORS
      ? {}
      : {
          resourceDetectors: [envDetector, processDetector],
          resource: resourceFromAttributes({ [ATTR_HOST_NAME]: hostname() }),
        }),
  });
  sdk.start();
  current = {
    enabled: true,
    async flush() {
      await Promise.all(exporting.map((processor) => processor.forceFlush()));
    },
    async shutdown(timeoutMs = 2000) {
      // The undici instrumentation listens on process-wide diagnostics channels: a later SDK of
      // the same process (the next test file) would otherwise add a second traceparent.
      for (const instrumentation of instrumentations) instrumentation.disable();
      current = undefined;
      // An unreachable collector must not hold a shutdown: what is not exported in time is lost.
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        sdk.shutdown().catch((error: unknown) => diag.warn('tracing shutdown failed', error)),
        new Promise<void>((resolve) => {
          timer = setTimeout(resolve, timeoutMs);
          timer.unref();
        }),
      ]);
      clearTimeout(timer);
    },
  };
  return current;
}

/** What startTracing decided (undefined before it ran). */
export function tracing(): Tracing | undefined {
  return current;
}
