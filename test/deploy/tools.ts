/** Command-line tools the deployment checks run (scripts/deps.sh installs them). */
import { spawnSync } from 'node:child_process';
import { CEILINGS } from '@pack/testkit';

/** The path of the first of `names` found on PATH, or undefined. */
export function onPath(...names: string[]): string | undefined {
  for (const name of names) {
    const found = spawnSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' });
    const file = found.status === 0 ? found.stdout.trim() : '';
    if (file) return file;
  }
  return undefined;
}

/**
 * The path of `name` on PATH. A missing tool fails the test that needs it, never skips it:
 * scripts/deps.sh installs it (`pnpm test`'s set-up and .ci/run call it), and a check that
 * silently stops running is worse than a failing one.
 */
export function externalTool(name: string): string {
  const file = onPath(name);
  if (file) return file;
  throw new Error(`${name} is not installed: run \`sudo bash scripts/deps.sh install\``);
}

export function run(
  file: string,
  args: string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv } = {},
): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync(file, args, { ...options, encoding: 'utf8', timeout: CEILINGS.start });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}
