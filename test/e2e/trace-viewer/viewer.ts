/** scripts/trace-viewer.sh as a user runs it, for the tests that need the local trace viewer. */
import { mkdtempSync, rmSync } from 'node:fs';
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
