import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { REPO_ROOT } from './repo';

/**
 * Runs one of the repository's TypeScript entry points (a service's main.ts, a CLI) as its own
 * process with exactly the given environment (plus PATH), and waits for it to end.
 */
export function runEntryPoint(file: string, args: string[], env: Record<string, string | undefined>) {
  return spawnSync(process.execPath, ['--require', 'tsx/cjs', path.join(REPO_ROOT, file), ...args], {
    env: { PATH: process.env.PATH, ...env },
    cwd: REPO_ROOT,
    encoding: 'utf8',
    timeout: 60_000,
  });
}

export interface EntryPointResult {
  status: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/**
 * Starts one of the repository's entry points as its own process without waiting: the test can
 * signal it (`child.kill('SIGTERM')`), read its standard output so far (`output()`) and await
 * `exited`. Killed after `lifetimeMs` (60 s) at the latest.
 */
export function startEntryPoint(
  file: string,
  args: string[],
  env: Record<string, string | undefined>,
  { lifetimeMs = 60_000 } = {},
): { child: ChildProcess; exited: Promise<EntryPointResult>; output: () => string } {
  return startProcess(
    process.execPath,
    ['--require', 'tsx/cjs', path.join(REPO_ROOT, file), ...args],
    env,
    lifetimeMs,
  );
}

/** Any command (a script of scripts/) as its own process, without blocking this one; resolves once it ended. */
export function spawnCommand(
  command: string,
  args: string[],
  env: Record<string, string | undefined>,
  { lifetimeMs = 60_000 } = {},
): Promise<EntryPointResult> {
  return startProcess(command, args, env, lifetimeMs).exited;
}

function startProcess(
  command: string,
  args: string[],
  env: Record<string, string | undefined>,
  lifetimeMs: number,
): { child: ChildProcess; exited: Promise<EntryPointResult>; output: () => string } {
  const child = spawn(command, args, {
    env: { PATH: process.env.PATH, PACK_LOG_COPY_DIR: process.env.PACK_LOG_COPY_DIR, ...env },
    cwd: REPO_ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const timer = setTimeout(() => child.kill('SIGKILL'), lifetimeMs);
  const exited = new Promise<EntryPointResult>((resolve) =>
    child.on('close', (status, signal) => {
      clearTimeout(timer);
      resolve({ status, signal, stdout, stderr });
    }),
  );
  return { child, exited, output: () => stdout };
}

/**
 * runEntryPoint without blocking: for a process that talks to services running in this test's
 * own process (spawnSync would stall their event loop).
 */
export function spawnEntryPoint(
  file: string,
  args: string[],
  env: Record<string, string | undefined>,
): Promise<EntryPointResult> {
  return startEntryPoint(file, args, env).exited;
}
