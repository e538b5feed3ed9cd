/**
 * How a bench or test starts a service as its own process: `compiled` runs
 * services/<name>/dist/main.js with plain node, as the image, compose and Kubernetes do
 * (docs/decisions/0050-compiled-services.md); `source` runs services/<name>/src/main.ts through
 * tsx (to compare the two). PACK_RUNTIME=source switches every bench to the sources.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { stop as stopEsbuild } from 'esbuild';
import { bundlePath, buildServices } from '../../scripts/build-services';

export type Runtime = 'compiled' | 'source';

/**
 * How the image, compose and Kubernetes run a service (decision 0050), measured: a 2 MB young
 * generation and V8's smaller heap growing steps (the old space still grows as needed: no limit
 * that could end the process)...
 */
export const PRODUCTION_NODE_FLAGS = ['--max-semi-space-size=2', '--optimize-for-size'];
/**
 * ...and glibc's allocator giving freed memory back: a fixed mmap threshold and trim threshold
 * (128 KB) instead of the dynamic ones that keep the parser's large blocks on the heap (5-16 MB
 * per service), two arenas instead of eight per core. The mmap threshold is 32 KB, not 64: V8's
 * parser and compilers work in 32 KB segments, which under 64 KB stayed on the brk heap after
 * loading the bundle (22 MB resident per service; test/deploy/allocator.test.ts). The Dockerfile
 * sets the same.
 */
export const PRODUCTION_ENV: Record<string, string> = {
  MALLOC_ARENA_MAX: '2',
  MALLOC_MMAP_THRESHOLD_: '32768',
  MALLOC_TRIM_THRESHOLD_: '131072',
};

const ROOT = path.resolve(__dirname, '../..');

export function runtimeFromEnv(): Runtime {
  return process.env.PACK_RUNTIME === 'source' ? 'source' : 'compiled';
}

/** Node's arguments for one service: its bundle as production runs it, or its sources through tsx. */
export function serviceCommand(name: string, runtime: Runtime, nodeArgs: string[] = []): string[] {
  return runtime === 'compiled'
    ? [...PRODUCTION_NODE_FLAGS, ...nodeArgs, bundlePath(name)]
    : [...nodeArgs, '--require', 'tsx/cjs', path.join(ROOT, 'services', name, 'src/main.ts')];
}

/** The environment a service runs with besides its own variables (the image's MALLOC_* settings). */
export function runtimeEnv(runtime: Runtime): Record<string, string> {
  return runtime === 'compiled' ? PRODUCTION_ENV : {};
}

/**
 * Builds the bundles when they are missing or older than the sources (a no-op otherwise), then
 * ends esbuild's service process: left running, it held 2.1 GB resident beside the bench for the
 * whole of a soak on the shared machine.
 */
export async function prepareRuntime(runtime: Runtime): Promise<void> {
  if (runtime === 'compiled' && (await buildServices())) await stopEsbuild();
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
