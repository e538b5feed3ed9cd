/**
 * How a bench or test starts a service as its own process: the runtimes, flags and variables of
 * scripts/lib/service-process.ts, which `pnpm start` uses too. PACK_RUNTIME=source switches every
 * bench to the sources through tsx (to compare with the compiled bundles).
 */
import { readFileSync } from 'node:fs';
import type { Runtime } from '../../scripts/lib/service-process';

export {
  PRODUCTION_ENV,
  PRODUCTION_NODE_FLAGS,
  prepareRuntime,
  runtimeEnv,
  serviceCommand,
  spawnService,
  type Runtime,
} from '../../scripts/lib/service-process';

export function runtimeFromEnv(): Runtime {
  return process.env.PACK_RUNTIME === 'source' ? 'source' : 'compiled';
}

/** Resident memory of a process in MB (Linux /proc), or undefined once it is gone. */
export function rssMb(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    const match = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Number(match[1]) / 1024 : undefined;
  } catch {
    return undefined;
  }
}

/** Runs a bench's main: an error is printed with its stack and ends the process with 1. */
export function runBench(main: () => Promise<void>): void {
  main().catch((error: unknown) => {
    process.stderr.write(`${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`);
    process.exit(1);
  });
}
