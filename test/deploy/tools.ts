/** Command-line tools the deployment checks run when they are installed (.ci/run installs them). */
import { spawnSync } from 'node:child_process';

/**
 * The path of `name` on PATH, or undefined so the test can skip. With CI=true a missing tool is
 * an error: CI installs it, and a check that silently stops running is worse than a failing one.
 */
export function externalTool(
  name: string,
  install: string,
  { optional = false }: { optional?: boolean } = {},
): string | undefined {
  const found = spawnSync('sh', ['-c', `command -v ${name}`], { encoding: 'utf8' });
  const file = found.status === 0 ? found.stdout.trim() : '';
  if (file) return file;
  if (process.env.CI === 'true' && !optional)
    throw new Error(`${name} is not installed and CI=true: ${install}`);
  return undefined;
}

/** Why a check does not run here, as the skipped test's name shows it. */
export const missing = (name: string, install: string) =>
  `SKIPPED: ${name} not installed (${install}); CI=true fails instead`;

export function run(
  file: string,
  args: string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv } = {},
): { status: number | null; stdout: string; stderr: string } {
  const result = spawnSync(file, args, { ...options, encoding: 'utf8', timeout: 60_000 });
  return { status: result.status, stdout: result.stdout, stderr: result.stderr };
}
