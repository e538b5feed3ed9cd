/**
 * The demo's trace: it sends its declaration with a W3C `traceparent` it made up (the gateway
 * continues it), prints the trace id, and where to open the trace when the local viewer
 * (`PACK_TRACING=1 pnpm start`, scripts/trace-viewer.sh: Zipkin) answers.
 */
import { randomBytes } from 'node:crypto';

export interface DemoTrace {
  traceId: string;
  /** `00-<trace id>-<parent span id>-01`: version 00, sampled. */
  traceparent: string;
}

export function newTrace(): DemoTrace {
  const traceId = randomBytes(16).toString('hex');
  return { traceId, traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-01` };
}

/** PACK_TRACE_VIEWER_URL, else the viewer's default address (PACK_TRACE_VIEWER_PORT, 9411). */
export function viewerBase(env: NodeJS.ProcessEnv): string {
  const url = env.PACK_TRACE_VIEWER_URL || `http://127.0.0.1:${env.PACK_TRACE_VIEWER_PORT || '9411'}`;
  return url.replace(/\/+$/, '');
}

interface ZipkinSpan {
  localEndpoint?: { serviceName?: string };
}

async function getJson(url: string): Promise<{ status: number; body: unknown }> {
  const response = await fetch(url, { signal: AbortSignal.timeout(3_000) });
  const text = await response.text();
  try {
    return { status: response.status, body: JSON.parse(text) };
  } catch {
    return { status: response.status, body: null };
  }
}

/** The lines of "Where to look" about the trace: its address in the viewer and what it holds so far. */
export async function traceLines(env: NodeJS.ProcessEnv, traceId: string): Promise<string[]> {
  const base = viewerBase(env);
  const label = '  the trace              ';
  try {
    const info = await getJson(`${base}/info`);
    if (info.status !== 200 || !(info.body as { zipkin?: unknown } | null)?.zipkin)
      throw new Error('not Zipkin');
  } catch {
    return [
      `${label} id ${traceId}: no trace viewer answers at ${base} (\`PACK_TRACING=1 pnpm start\` runs one)`,
    ];
  }
  const lines = [`${label} ${base}/zipkin/traces/${traceId}`];
  try {
    const trace = await getJson(`${base}/api/v2/trace/${traceId}`);
    const spans = trace.status === 200 && Array.isArray(trace.body) ? (trace.body as ZipkinSpan[]) : [];
    const services = [...new Set(spans.map((s) => s.localEndpoint?.serviceName ?? '?'))].sort();
    lines.push(
      spans.length > 0
        ? `${' '.repeat(label.length)} ${spans.length} span(s) so far from ${services.join(', ')}`
        : `${' '.repeat(label.length)} no spans yet: services send theirs every few seconds, ` +
            'if they export there (OTEL_TRACES_EXPORTER=zipkin; `PACK_TRACING=1 pnpm start` sets it)',
    );
  } catch {
    // the address is printed; the count is a courtesy
  }
  return lines;
}
