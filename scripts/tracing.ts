/**
 * `PACK_TRACING=1 pnpm start`: the local trace viewer (scripts/trace-viewer.sh, Zipkin) is started
 * and every service exports its spans there through the OpenTelemetry SDK's standard variables.
 * Without PACK_TRACING (or with 0) nothing is started and nothing is set.
 */
import { execFileSync } from 'node:child_process';
import path from 'node:path';

const root = path.resolve(__dirname, '..');

/** Variables with which an operator chose where spans go (or that they go nowhere): theirs win. */
const OPERATOR_CHOICE = /^OTEL_(SDK_DISABLED|TRACES_EXPORTER|EXPORTER_)/;

export interface Tracing {
  /** Variables for every service: empty unless PACK_TRACING=1 and the operator set none of their own. */
  env: Record<string, string>;
  /** What `pnpm start` prints about it. */
  lines: string[];
}

export class TracingError extends Error {}

/** Starts the viewer unless it already answers; its `export` lines as variables. */
export function startViewer(env: NodeJS.ProcessEnv): Record<string, string> {
  let output: string;
  try {
    output = execFileSync('bash', [path.join(root, 'scripts/trace-viewer.sh'), 'up'], {
      encoding: 'utf8',
      env,
      stdio: ['ignore', 'pipe', 'inherit'],
    });
  } catch {
    throw new TracingError(
      'the trace viewer did not start (scripts/trace-viewer.sh up; its reason is above)',
    );
  }
  return Object.fromEntries([...output.matchAll(/^export (\w+)='([^']*)'$/gm)].map((m) => [m[1]!, m[2]!]));
}

export function tracing(env: NodeJS.ProcessEnv, start = startViewer): Tracing {
  const flag = env.PACK_TRACING ?? '';
  if (flag === '' || flag === '0') return { env: {}, lines: [] };
  if (flag !== '1')
    throw new TracingError(`PACK_TRACING must be 1 (run the local trace viewer) or 0, not "${flag}"`);
  const viewer = start(env);
  const url = viewer.PACK_TRACE_VIEWER_URL;
  if (!url) throw new TracingError('scripts/trace-viewer.sh up printed no PACK_TRACE_VIEWER_URL');
  const lines = [`[start] trace viewer (Zipkin): ${url}/zipkin/ (pnpm trace-viewer:down stops it)`];
  const own = Object.keys(env).filter((name) => OPERATOR_CHOICE.test(name) && env[name] !== undefined);
  if (own.length > 0) {
    lines.push(
      `[start] tracing: your ${own.sort().join(', ')} kept; the services export to the viewer only if they point at it ` +
        `(OTEL_TRACES_EXPORTER=zipkin OTEL_EXPORTER_ZIPKIN_ENDPOINT=${viewer.OTEL_EXPORTER_ZIPKIN_ENDPOINT})`,
    );
    return { env: { PACK_TRACE_VIEWER_URL: url }, lines };
  }
  lines.push(
    `[start] tracing: every service exports with OTEL_TRACES_EXPORTER=zipkin to ${viewer.OTEL_EXPORTER_ZIPKIN_ENDPOINT}`,
  );
  return { env: viewer, lines };
}
