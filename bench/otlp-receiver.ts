/**
 * A local OTLP/HTTP JSON receiver for the tracing overhead runs (docs/decisions/0047): listens on
 * PORT (4318), counts what the services export and prints spans per second every 5 s. Run the
 * benches beside it with OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:4318 and
 * OTEL_EXPORTER_OTLP_PROTOCOL=http/json.
 */
import { OtlpReceiver } from '@pack/testkit';

async function main(): Promise<void> {
  const receiver = await new OtlpReceiver().start(Number(process.env.PORT ?? 4318));
  process.stdout.write(`OTLP receiver on ${receiver.url}\n`);
  let total = 0;
  setInterval(() => {
    const recent = receiver.spans.length;
    total += recent;
    // Counts only: the spans themselves would grow without bound over a long run.
    receiver.spans.length = 0;
    if (recent > 0) process.stdout.write(`${total} spans, ${(recent / 5).toFixed(0)}/s\n`);
  }, 5000);
}

void main();
