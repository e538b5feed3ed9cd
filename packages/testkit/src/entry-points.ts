import { spawnSync } from 'node:child_process';
import { CEILINGS } from './ceilings';
import { entryPointCommand, startProcess, type EntryPointResult } from './process';
import { REPO_ROOT } from './repo';

export type { EntryPointResult } from './process';

/**
 * Runs one of the repository's TypeScript entry points (a CLI, or a service's main.ts that is
 * expected to refuse to start) as its own process with exactly the given environment (plus PATH),
 * and waits for it to end. A service that should run is started with spawnService.
 */
export function runEntryPoint(file: string, args: string[], env: Record<string, string | undefined>) {
  const [command, argv] = entryPointCommand(file, args);
  return spawnSync(command, argv, {
    env: { PATH: process.env.PATH, ...env },
    cwd: REPO_ROOT,
    encoding: 'utf8',
    timeout: CEILINGS.start,
  });
}

/** Any command (a script of scripts/) as its own process, without blocking this one; resolves once it ended. */
export function spawnCommand(
  command: string,
  args: string[],
  env: Record<string, string | undefined>,
  { lifetimeMs = CEILINGS.processLifetime } = {},
): Promise<EntryPointResult> {
  return startProcess(command, args, env, lifetimeMs).exited;
}

/**
 * runEntryPoint without blocking: for a process that talks to services running in this test's
 * own process (spawnSync would stall their event loop). Killed after the kit's process lifetime at
 * the latest.
 */
export function spawnEntryPoint(
  file: string,
  args: string[],
  env: Record<string, string | undefined>,
): Promise<EntryPointResult> {
  const [command, argv] = entryPointCommand(file, args);
  return startProcess(command, argv, env).exited;
}
