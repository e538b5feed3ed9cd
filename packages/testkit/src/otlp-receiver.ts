import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { CEILINGS } from './ceilings';
import { recordForScan } from './scan-record';
import { waitFor } from './waiting';

/** An OTLP/JSON attribute value (AnyValue). */
interface AnyValue {
  stringValue?: string;
  intValue?: string | number;
  doubleValue?: number;
  boolValue?: boolean;
  arrayValue?: { values?: AnyValue[] };
}
interface KeyValue {
  key: string;
  value: AnyValue;
}
interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  startTimeUnixNano: string;
  endTimeUnixNano: string;
  attributes?: KeyValue[];
  events?: { name: string; attributes?: KeyValue[] }[];
  links?: { traceId: string; spanId: string }[];
  status?: { code?: number; message?: string };
}
interface ExportRequest {
  resourceSpans?: {
    resource?: { attributes?: KeyValue[] };
    scopeSpans?: { scope?: { name?: string }; spans?: OtlpSpan[] }[];
  }[];
}

/** One exported span, read back: its service (resource `service.name`) and plain attributes. */
export interface ReceivedSpan {
  traceId: string;
  spanId: string;
  /** Empty for a trace's root. */
  parentSpanId: string;
  name: string;
  /** OTLP SpanKind: 1 internal, 2 server, 3 client, 4 producer, 5 consumer. */
  kind: number;
  service: string;
  scope: string;
  attributes: Record<string, unknown>;
  events: { name: string; attributes: Record<string, unknown> }[];
  links: { traceId: string; spanId: string }[];
  status: { code: number; message?: string };
  /** Start time, in milliseconds since the epoch. */
  startMs: number;
  /** End time, in milliseconds since the epoch. */
  endMs: number;
}

export const SPAN_KIND = { internal: 1, server: 2, client: 3, producer: 4, consumer: 5 } as const;

function valueOf(value: AnyValue | undefined): unknown {
  if (!value) return undefined;
  if (value.stringValue !== undefined) return value.stringValue;
  if (value.intValue !== undefined) return Number(value.intValue);
  if (value.doubleValue !== undefined) return value.doubleValue;
  if (value.boolValue !== undefined) return value.boolValue;
  if (value.arrayValue) return (value.arrayValue.values ?? []).map(valueOf);
  return undefined;
}

function attributesOf(list: KeyValue[] | undefined): Record<string, unknown> {
  return Object.fromEntries((list ?? []).map(({ key, value }) => [key, valueOf(value)]));
}

/**
 * A local OTLP/HTTP trace receiver (a collector's receiving end): decodes what the SDK's OTLP
 * exporter sends with OTEL_EXPORTER_OTLP_PROTOCOL=http/json to `<url>/v1/traces` and keeps every
 * span. http/protobuf is answered 415 (the tests export JSON). While the suite-wide leak scan runs,
 * every export request is also written for it (`spans-<pid>.jsonl`, suite-scan.ts).
 */
export class OtlpReceiver {
  readonly spans: ReceivedSpan[] = [];
  url = '';
  private server?: http.Server;

  /** Listens on loopback, on `port` (any free one by default). */
  async start(port = 0): Promise<this> {
    this.server = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        if (req.method !== 'POST' || req.url !== '/v1/traces') return void res.writeHead(404).end();
        if (!/json/.test(req.headers['content-type'] ?? ''))
          return void res.writeHead(415).end('this receiver reads OTLP/JSON (http/json)');
        const text = Buffer.concat(chunks).toString('utf8');
        try {
          this.read(JSON.parse(text) as ExportRequest);
        } catch {
          return void res.writeHead(400).end();
        }
        recordForScan('spans', { body: text });
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((resolve) => this.server!.listen(port, '127.0.0.1', resolve));
    this.url = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  private read(request: ExportRequest): void {
    for (const resourceSpans of request.resourceSpans ?? []) {
      const named = attributesOf(resourceSpans.resource?.attributes)['service.name'];
      const service = typeof named === 'string' ? named : '';
      for (const scopeSpans of resourceSpans.scopeSpans ?? [])
        for (const span of scopeSpans.spans ?? [])
          this.spans.push({
            traceId: span.traceId,
            spanId: span.spanId,
            parentSpanId: span.parentSpanId ?? '',
            name: span.name,
            kind: span.kind,
            service,
            scope: scopeSpans.scope?.name ?? '',
            attributes: attributesOf(span.attributes),
            events: (span.events ?? []).map((event) => ({
              name: event.name,
              attributes: attributesOf(event.attributes),
            })),
            links: (span.links ?? []).map(({ traceId, spanId }) => ({ traceId, spanId })),
            status: { code: span.status?.code ?? 0, message: span.status?.message },
            startMs: Number(span.startTimeUnixNano) / 1e6,
            endMs: Number(span.endTimeUnixNano) / 1e6,
          });
    }
  }

  /** Every span of one trace received so far, oldest first. */
  trace(traceId: string): ReceivedSpan[] {
    return this.spans.filter((span) => span.traceId === traceId).sort((a, b) => a.startMs - b.startMs);
  }

  /** Waits until the trace holds spans for which `complete` is true; returns them. */
  async waitForTrace(
    traceId: string,
    complete: (spans: ReceivedSpan[]) => boolean,
    what: string,
    timeoutMs = CEILINGS.wait,
  ): Promise<ReceivedSpan[]> {
    return waitFor(() => (complete(this.trace(traceId)) ? this.trace(traceId) : undefined), {
      what,
      timeoutMs,
    });
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
    this.server?.closeAllConnections();
  }
}
