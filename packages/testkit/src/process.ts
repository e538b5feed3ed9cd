import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { CEILINGS } from './ceilings';
import { recordProcess } from './leftover-files';
import { REPO_ROOT } from './repo';

/** How a process of the repository ended, and everything it wrote. */
export interface EntryPointResult {
  status: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
}

/** A process started by the kit: the OS process, its end, and its standard output so far. */
export interface StartedProcess {
  child: ChildProcess;
  exited: Promise<EntryPointResult>;
  output: () => string;
}

/** How node runs one of the repository's TypeScript entry points (a service's main.ts, a CLI). */
export function entryPointCommand(file: string, args: string[]): [string, string[]] {
  return [process.execPath, ['--require', 'tsx/cjs', path.join(REPO_ROOT, file), ...args]];
}

/**
 * Any command as its own process with exactly the given environment (plus PATH and the log copy
 * folder), from the repository's root, without waiting: SIGKILLed after `lifetimeMs` (the kit's
 * process lifetime unless given) at the latest. Not exported by the kit's index: tests start
 * services with spawnService (the harness's process variant) and CLIs with runEntryPoint or
 * spawnEntryPoint.
 */
export function startProcess(
  command: string,
  args: string[],
  env: Record<string, string | undefined>,
  lifetimeMs: number = CEILINGS.processLifetime,
): StartedProcess {
  const child = spawn(command, args, {
    env: { PATH: process.env.PATH, PACK_LOG_COPY_DIR: process.env.PACK_LOG_COPY_DIR, ...env },
    cwd: REPO_ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  recordProcess(child);
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  // A safety net, not a reason to keep a jest worker running.
  const timer = setTimeout(() => child.kill('SIGKILL'), lifetimeMs).unref();
  const exited = new Promise<EntryPointResult>((resolve) =>
    child.on('close', (status, signal) => {
      clearTimeout(timer);
      resolve({ status, signal, stdout, stderr });
    }),
  );
  return { child, exited, output: () => stdout };
}
