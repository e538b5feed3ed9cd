/**
 * How a service runs as its own process, for `pnpm start`, `pnpm dev`, the benches and the tests
 * that spawn services: `compiled` runs services/<name>/dist/main.js with plain node and the
 * production flags and allocator settings, as the image, compose and Kubernetes do
 * (docs/decisions/0050-compiled-services.md); `source` runs services/<name>/src/main.ts through
 * tsx (`pnpm dev`, and the benches with PACK_RUNTIME=source to compare).
 */
import { spawn, type ChildProcess, type StdioOptions } from 'node:child_process';
import path from 'node:path';
import { stop as stopEsbuild } from 'esbuild';
import { bundlePath, buildServices } from '../build-services';

export type Runtime = 'compiled' | 'source';

const ROOT = path.resolve(__dirname, '../..');

/**
 * What `pnpm start` runs: the compiled bundles, as production does (memory included); with
 * `--dev` (`pnpm dev`) the sources, restarted on change. The memory test measures what this
 * picks for `pnpm start`.
 */
export function startRuntime(argv: readonly string[]): Runtime {
  return argv.includes('--dev') ? 'source' : 'compiled';
}

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
 * Builds the bundles of the services whose sources changed (a hash each; a no-op otherwise) and
 * returns their names, then ends esbuild's service process: left running, it held 2.1 GB
 * resident beside the bench for the whole of a soak on the shared machine.
 */
export async function prepareRuntime(runtime: Runtime): Promise<string[]> {
  if (runtime !== 'compiled') return [];
  const built = await buildServices();
  if (built.length > 0) await stopEsbuild();
  return built;
}

export interface ServiceProcessOptions {
  /** Every variable the process gets (nothing is inherited); the runtime's own go under them. */
  env: Record<string, string | undefined>;
  /** Node flags before the entry point (e.g. `--watch` for `pnpm dev`). */
  nodeArgs?: string[];
  stdio?: StdioOptions;
}

/** Starts one service as `pnpm start` (compiled) or `pnpm dev` (source) runs it. */
export function spawnService(name: string, runtime: Runtime, options: ServiceProcessOptions): ChildProcess {
  return spawn(process.execPath, serviceCommand(name, runtime, options.nodeArgs), {
    env: { ...runtimeEnv(runtime), ...options.env },
    cwd: ROOT,
    stdio: options.stdio ?? ['ignore', 'inherit', 'inherit'],
  });
}
