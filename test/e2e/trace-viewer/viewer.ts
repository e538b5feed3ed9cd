/** scripts/trace-viewer.sh as a user runs it, for the tests that need the local trace viewer. */
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { CEILINGS, freePort, REPO_ROOT, spawnCommand } from '@pack/testkit';

const SCRIPT = path.join(REPO_ROOT, 'scripts/trace-viewer.sh');

/** One command of the script, without blocking this process (its servers keep answering). */
export const viewer = (command: string, env: Record<string, string>) =>
  spawnCommand('bash', [SCRIPT, command], { ...process.env, ...env }, { lifetimeMs: CEILINGS.start });

export const exportsOf = (stdout: string) =>
  Object.fromEntries([...stdout.matchAll(/^export (\w+)='([^']*)'$/gm)].map((m) => [m[1]!, m[2]!]));

/** A private viewer: its own folder (run/, logs/) and a free port; the jar from the shared cache. */
export async function privateViewer(): Promise<{
  env: Record<string, string>;
  base: string;
  dir: string;
  remove: () => Promise<void>;
}> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'pack-trace-viewer-'));
  const port = await freePort();
  const env = { PACK_TRACE_VIEWER_DIR: dir, PACK_TRACE_VIEWER_PORT: String(port) };
  return {
    env,
    base: `http://127.0.0.1:${port}`,
    dir,
    remove: async () => {
      await viewer('down', env);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/**
 * A stand-in for the viewer where a test needs only what `pnpm demo` reads of it (Zipkin's /info,
 * its /api/v2/trace/<id> and the UI's trace page), without starting Zipkin's JVM: the real
 * viewer answering those same reads is trace-viewer.test.ts's. Keeps the paths asked.
 */
export async function zipkinStandIn(): Promise<{
  base: string;
  asked: string[];
  close: () => Promise<void>;
}> {
  const asked: string[] = [];
  const server = http.createServer((req, res) => {
    const url = req.url ?? '/';
    asked.push(url);
    const json = (status: number, body: unknown) =>
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    if (url === '/info') return json(200, { zipkin: { version: '3.6.1' } });
    // No span of the demo's trace: the stack exports its spans to its own collector.
    if (/^\/api\/v2\/trace\/[0-9a-f]{32}$/.test(url)) return json(404, { message: 'trace not found' });
    if (/^\/zipkin\/traces\/[0-9a-f]{32}$/.test(url))
      return res.writeHead(200, { 'content-type': 'text/html' }).end('<title>Zipkin</title>');
    return json(404, { message: 'not found' });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    asked,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
