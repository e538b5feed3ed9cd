/** scripts/trace-viewer.sh as a user runs it, for the tests that need the local trace viewer. */
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { freePort, REPO_ROOT } from '@pack/testkit';

const SCRIPT = path.join(REPO_ROOT, 'scripts/trace-viewer.sh');

export interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** One command of the script, without blocking this process (its servers keep answering). */
export function viewer(command: string, env: Record<string, string>): Promise<Run> {
  return new Promise((resolve) => {
    const child = spawn('bash', [SCRIPT, command], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
    child.on('close', (status) => resolve({ status, stdout, stderr }));
  });
}

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
