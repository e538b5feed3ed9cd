import { OtlpJsonExporter } from './otlp-json-exporter';
import { OtlpReceiver } from './otlp-receiver';

/**
 * The collector every stack of this test file exports its spans to: a local OTLP receiver, and
 * the SDK of this process (@pack/tracing startTracing, as a service's main.ts starts it) exporting
 * OTLP/JSON to it (OtlpJsonExporter; batches every 100 ms, every span sampled). The
 * stack's leak scan reads each exported span; so does the suite-wide scan (suite-scan.ts). Stopped
 * after the file's tests (capture-responses.ts), so the next file in the worker starts afresh.
 */
let collector: Promise<OtlpReceiver> | undefined;

/** Loaded on first use: every test file runs the set-up that may stop it, few start a stack. */
// eslint-disable-next-line @typescript-eslint/no-require-imports
const sdk = () => require('@pack/tracing') as typeof import('@pack/tracing');

export function stackCollector(): Promise<OtlpReceiver> {
  collector ??= (async () => {
    const receiver = await new OtlpReceiver().start();
    delete process.env.OTEL_SDK_DISABLED;
    const exporter = new OtlpJsonExporter(receiver.url);
    if (!sdk().startTracing('e2e-test', { exporter }).enabled)
      throw new Error('tracing did not start for the stack');
    return receiver;
  })();
  return collector;
}

/** Every span ended so far, exported (the collector then holds it). */
export async function flushSpans(): Promise<void> {
  if (!collector) return;
  await sdk().tracing()?.flush();
}

/** Stops the SDK and the receiver, if a stack of this file started them. */
export async function stopStackCollector(): Promise<void> {
  if (!collector) return;
  const receiver = await collector;
  await sdk().tracing()?.shutdown(5000);
  await receiver.stop();
  collector = undefined;
}
