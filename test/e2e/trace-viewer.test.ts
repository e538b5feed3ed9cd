/**
 * The local trace viewer (item 6): scripts/trace-viewer.sh runs Zipkin's server from
 * the jar it keeps in .local/cache (`scripts/deps.sh install` fetches it once; otherwise `up`
 * downloads it here, 135 MB); spans sent through the OpenTelemetry SDK's standard
 * `OTEL_TRACES_EXPORTER=zipkin` path are read back from Zipkin's API and UI.
 */
import { randomBytes } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import http from 'node:http';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { spawnEntryPoint, waitFor } from '@pack/testkit';
import { traceLines } from '../../scripts/demo/trace';
import { tracing } from '../../scripts/tracing';
import { exportsOf, privateViewer, viewer } from './trace-viewer/viewer';

interface ZipkinSpan {
  traceId: string;
  id: string;
  parentId?: string;
  name: string;
  localEndpoint?: { serviceName?: string };
  tags?: Record<string, string>;
}

describe('the local trace viewer (scripts/trace-viewer.sh)', () => {
  let own: Awaited<ReturnType<typeof privateViewer>>;
  let env: Record<string, string>;
  let dir: string;

  beforeAll(async () => {
    own = await privateViewer();
    ({ env, dir } = own);
  });
  afterAll(async () => {
    await own?.remove();
  });

  it('starts Zipkin on a free port, shows a trace the OpenTelemetry SDK exported with OTEL_TRACES_EXPORTER=zipkin, in its API and its UI', async () => {
    const up = await viewer('up', env);
    expect({ status: up.status, stderr: up.status === 0 ? '' : up.stderr }).toEqual({
      status: 0,
      stderr: '',
    });
    const base = `http://127.0.0.1:${env.PACK_TRACE_VIEWER_PORT}`;
    const exported = exportsOf(up.stdout);
    expect(exported).toEqual({
      OTEL_TRACES_EXPORTER: 'zipkin',
      OTEL_EXPORTER_ZIPKIN_ENDPOINT: `${base}/api/v2/spans`,
      PACK_TRACE_VIEWER_URL: base,
    });
    expect(up.stderr).toContain(`up: UI ${base}/zipkin/`);
    expect((await viewer('status', env)).stdout).toMatch(
      new RegExp(`^trace-viewer +up +${base}/zipkin/ \\(pid \\d+\\)`),
    );

    // A caller's trace context, as `pnpm demo` sends it with its declaration.
    const traceId = randomBytes(16).toString('hex');
    const callerSpan = randomBytes(8).toString('hex');
    const emitted = await spawnEntryPoint('test/e2e/trace-viewer/emit-spans.ts', [], {
      ...exported,
      OTEL_SERVICE_NAME: 'pack-viewer-check',
      TRACEPARENT: `00-${traceId}-${callerSpan}-01`,
    });
    expect({ status: emitted.status, stderr: emitted.stderr }).toEqual({ status: 0, stderr: '' });

    // Zipkin's collector stores asynchronously: the trace shows within a moment.
    const spans = await waitFor(
      async () => {
        const answer = await fetch(`${base}/api/v2/trace/${traceId}`);
        const found = answer.status === 200 ? ((await answer.json()) as ZipkinSpan[]) : [];
        return found.length >= 2 && found;
      },
      { intervalMs: 250, what: `both spans of trace ${traceId} in Zipkin` },
    );
    const declaration = spans.find((s) => s.name === 'declaration');
    const stage = spans.find((s) => s.name === 'stage');
    expect(declaration).toMatchObject({
      traceId,
      parentId: callerSpan,
      localEndpoint: { serviceName: 'pack-viewer-check' },
      tags: { 'pack.service_item': '7' },
    });
    expect(stage).toMatchObject({ traceId, parentId: declaration!.id, tags: { 'pack.stage': 'CONFIG' } });
    expect(spans).toHaveLength(2);

    // `pnpm demo` tells where to open it and what it holds so far; the address opens Zipkin's UI.
    expect(await traceLines({ PACK_TRACE_VIEWER_URL: base }, traceId)).toEqual([
      `  the trace               ${base}/zipkin/traces/${traceId}`,
      '                          2 span(s) so far from pack-viewer-check',
    ]);
    const page = await fetch(`${base}/zipkin/traces/${traceId}`);
    expect(page.status).toBe(200);
    expect(await page.text()).toMatch(/<title>Zipkin<\/title>/i);
  });

  it('`PACK_TRACING=1 pnpm start` points every service at it unless the operator chose an exporter; without PACK_TRACING nothing changes', () => {
    const base = `http://127.0.0.1:${env.PACK_TRACE_VIEWER_PORT}`;
    const shell = { PATH: process.env.PATH, ...env };
    const traced = tracing({ ...shell, PACK_TRACING: '1' });
    expect(traced.env).toEqual({
      OTEL_TRACES_EXPORTER: 'zipkin',
      OTEL_EXPORTER_ZIPKIN_ENDPOINT: `${base}/api/v2/spans`,
      PACK_TRACE_VIEWER_URL: base,
    });
    expect(traced.lines[0]).toBe(
      `[start] trace viewer (Zipkin): ${base}/zipkin/ (pnpm trace-viewer:down stops it)`,
    );

    const theirs = tracing({
      ...shell,
      PACK_TRACING: '1',
      OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318',
    });
    expect(theirs.env).toEqual({ PACK_TRACE_VIEWER_URL: base });
    expect(theirs.lines[1]).toContain('[start] tracing: your OTEL_EXPORTER_OTLP_ENDPOINT kept;');

    const never = () => {
      throw new Error('the viewer must not start');
    };
    expect(tracing({ ...env }, never)).toEqual({ env: {}, lines: [] });
    expect(tracing({ ...env, PACK_TRACING: '0' }, never)).toEqual({ env: {}, lines: [] });
    expect(() => tracing({ ...env, PACK_TRACING: 'yes' }, never)).toThrow(
      'PACK_TRACING must be 1 (run the local trace viewer) or 0, not "yes"',
    );
  });

  it('down stops the server it started', async () => {
    const base = `http://127.0.0.1:${env.PACK_TRACE_VIEWER_PORT}`;
    const down = await viewer('down', env);
    expect(down.status).toBe(0);
    expect(down.stderr).toMatch(/stopping zipkin-server \(pid \d+\)/);
    await expect(fetch(`${base}/health`)).rejects.toThrow();
    expect((await viewer('status', env)).stdout).toMatch(/^trace-viewer +down /);
    expect(readdirSync(path.join(dir, 'logs'))).toEqual(['zipkin.log']);
    // `pnpm demo` then prints the trace id and how to get a viewer.
    expect(await traceLines({ PACK_TRACE_VIEWER_URL: `${base}/` }, 'a'.repeat(32))).toEqual([
      `  the trace               id ${'a'.repeat(32)}: no trace viewer answers at ${base} (\`PACK_TRACING=1 pnpm start\` runs one)`,
    ]);
  });

  it('refuses a port held by something that is not Zipkin, naming the setting to change', async () => {
    const other = http.createServer((_request, response) => {
      response.statusCode = 404;
      response.end();
    });
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
    const port = String((other.address() as net.AddressInfo).port);
    try {
      const up = await viewer('up', { PACK_TRACE_VIEWER_DIR: dir, PACK_TRACE_VIEWER_PORT: port });
      expect(up.status).toBe(1);
      expect(up.stdout).toBe('');
      expect(up.stderr).toContain(
        `127.0.0.1:${port} is taken by something that is not Zipkin: set PACK_TRACE_VIEWER_PORT`,
      );
    } finally {
      other.close();
    }
  });

  it('refuses a downloaded jar whose SHA-256 is not the pinned one and keeps nothing of it', async () => {
    // A Maven repository that serves the right path with the wrong bytes.
    const requested: string[] = [];
    const repo = http.createServer((request, response) => {
      requested.push(request.url ?? '');
      response.end('not the zipkin jar');
    });
    await new Promise<void>((resolve) => repo.listen(0, '127.0.0.1', resolve));
    const cache = mkdtempSync(path.join(os.tmpdir(), 'pack-trace-cache-'));
    try {
      const fetched = await viewer('fetch', {
        PACK_TRACE_VIEWER_CACHE: cache,
        PACK_MAVEN_REPO: `http://127.0.0.1:${(repo.address() as net.AddressInfo).port}/maven2`,
      });
      expect(fetched.status).toBe(1);
      expect(fetched.stdout).toBe('');
      expect(fetched.stderr).toMatch(
        /has SHA-256 [0-9a-f]{64}, expected [0-9a-f]{64} \(Maven Central's \.sha256\): not used/,
      );
      expect(requested).toEqual(['/maven2/io/zipkin/zipkin-server/3.6.1/zipkin-server-3.6.1-exec.jar']);
      expect(readdirSync(cache)).toEqual([]);
      expect(existsSync(path.join(cache, 'zipkin-server-3.6.1-exec.jar'))).toBe(false);
    } finally {
      repo.close();
      rmSync(cache, { recursive: true, force: true });
    }
  });
});
