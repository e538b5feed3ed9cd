import http from 'node:http';
import { JsonTraceSerializer } from '@opentelemetry/otlp-transformer';
import type { ReadableSpan, SpanExporter } from '@pack/tracing';

/** ExportResultCode of @opentelemetry/core. */
const SUCCESS = 0;
const FAILED = 1;

/**
 * The OTLP/HTTP JSON export of the SDK's OTLPTraceExporter for a process inside jest's sandbox,
 * which refuses that exporter's dynamic `import('http')`: the same serializer
 * (@opentelemetry/otlp-transformer), POSTed to `<endpoint>/v1/traces`. Service processes of a
 * test use the SDK's own exporter from the standard variables.
 */
export class OtlpJsonExporter implements SpanExporter {
  constructor(private readonly endpoint: string) {}

  export(spans: ReadableSpan[], done: (result: { code: number; error?: Error }) => void): void {
    const body = Buffer.from(JsonTraceSerializer.serializeRequest(spans) ?? new Uint8Array());
    const request = http.request(
      `${this.endpoint}/v1/traces`,
      { method: 'POST', headers: { 'content-type': 'application/json', 'content-length': body.length } },
      (response) => {
        response.resume();
        response.on('end', () => done({ code: response.statusCode === 200 ? SUCCESS : FAILED }));
      },
    );
    request.on('error', (error) => done({ code: FAILED, error }));
    request.end(body);
  }

  shutdown(): Promise<void> {
    return Promise.resolve();
  }
}
