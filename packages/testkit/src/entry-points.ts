import { CEILINGS } from './ceilings';
import { entryPointCommand, startProcess, type EntryPointResult } from './process';

export type { EntryPointResult } from './process';

/**
 * Runs one of the repository's TypeScript entry points (a CLI, or a service's main.ts that is
 * expected to refuse to start) as its own process with exactly the given environment (plus PATH),
 * and resolves once it ended. A service that should run is started with spawnService. It never
 * blocks this process: services a test runs in it keep answering, and keep their broker
 * connections (RabbitMQ closes a connection that misses its heartbeats for 10 s, which a
 * CLI compiled by tsx on a loaded machine takes).
 */
export function runEntryPoint(
  file: string,
  args: string[],
  env: Record<string, string | undefined>,
): Promise<EntryPointResult> {
  const [command, argv] = entryPointCommand(file, args);
  return startProcess(command, argv, env, CEILINGS.start).exited;
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
 * runEntryPoint for a process that may run long (a demo, a load against services running in
 * this test's own process): killed after the kit's process lifetime at the latest.
 */
export function spawnEntryPoint(
  file: string,
  args: string[],
  env: Record<string, string | undefined>,
): Promise<EntryPointResult> {
  const [command, argv] = entryPointCommand(file, args);
  return startProcess(command, argv, env).exited;
}
