import { repoScript } from './repo';

/**
 * How the kit runs a service as its own process: its compiled bundle,
 * services/<name>/dist/main.js, with plain node and the production flags and allocator
 * settings, as the image, `pnpm start` and the benches run it (docs/decisions/0050). Those
 * are the repository's (scripts/lib/service-process.ts and scripts/build-services.ts, found
 * through repoScript): one place decides the command for all of them. A bundle loads in a
 * fifth of the CPU time tsx takes to compile a service's sources, and the tests that start
 * services as processes start dozens.
 */
interface ServiceRuntime {
  serviceCommand: (name: string, runtime: 'compiled') => string[];
  runtimeEnv: (runtime: 'compiled') => Record<string, string>;
  prepareRuntime: (runtime: 'compiled') => Promise<string[]>;
}

interface ServiceBuild {
  staleServices: (services: readonly string[]) => { service: string }[];
}

// Required by their place in the repository (the kit's package does not depend on the root's
// scripts, which load esbuild), and only by the files that start a service process.
// eslint-disable-next-line @typescript-eslint/no-require-imports
const runtime = () => require(repoScript('lib/service-process.ts')) as ServiceRuntime;
// eslint-disable-next-line @typescript-eslint/no-require-imports
const build = () => require(repoScript('build-services.ts')) as ServiceBuild;

/**
 * Builds the bundles whose sources changed (a hash per service; nothing else when none did) and
 * returns the services built. Run once by the jest global set-up, before any worker starts: two
 * builds at once would write the same files.
 */
export function buildServiceBundles(): Promise<string[]> {
  return runtime().prepareRuntime('compiled');
}

/** Services whose bundle this test file found current: hashed once each. */
const checked = new Set<string>();

/**
 * The command and environment that start the service `name` from its bundle. Throws, naming the
 * command that builds it, when the bundle is missing or older than the sources: the test would
 * otherwise run code other than the one it reads (the jest global set-up builds them; a
 * source edited during the run needs another run).
 */
export function serviceBundleCommand(name: string): { args: string[]; env: Record<string, string> } {
  if (!checked.has(name)) {
    if (build().staleServices([name]).length > 0)
      throw new Error(
        `services/${name}/dist/main.js is missing or older than its sources: run \`pnpm build\` ` +
          `(the jest global set-up does, before any test file)`,
      );
    checked.add(name);
  }
  const { serviceCommand, runtimeEnv } = runtime();
  return { args: serviceCommand(name, 'compiled'), env: runtimeEnv('compiled') };
}
