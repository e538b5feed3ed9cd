/**
 * Two spans through the OpenTelemetry SDK's standard path, configured by the environment only
 * (OTEL_TRACES_EXPORTER, OTEL_EXPORTER_ZIPKIN_ENDPOINT, OTEL_SERVICE_NAME), as a service is: a
 * `declaration` span continuing the W3C `traceparent` given in TRACEPARENT (as a gateway continues
 * the header a caller sent), and a `stage` span inside it. Exported when the SDK shuts down.
 */
import { context, propagation, trace } from '@opentelemetry/api';
import { NodeSDK } from '@opentelemetry/sdk-node';

async function main(): Promise<void> {
  const sdk = new NodeSDK();
  sdk.start();
  const incoming = propagation.extract(context.active(), { traceparent: process.env.TRACEPARENT ?? '' });
  const tracer = trace.getTracer('pack-trace-viewer-check');
  tracer.startActiveSpan('declaration', {}, incoming, (declaration) => {
    declaration.setAttribute('pack.service_item', 7);
    tracer.startActiveSpan('stage', (stage) => {
      stage.setAttribute('pack.stage', 'CONFIG');
      stage.end();
    });
    declaration.end();
  });
  await sdk.shutdown();
}

void main().then(
  () => process.exit(0),
  (error: unknown) => {
    process.stderr.write(`${String(error)}\n`);
    process.exit(1);
  },
);
