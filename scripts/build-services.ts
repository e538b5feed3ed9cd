/**
 * `pnpm build`: every service compiled to one plain JavaScript file, services/<name>/dist/main.js,
 * that `node` runs without tsx (docs/decisions/0050-compiled-services.md).
 *
 * esbuild bundles a service's main.ts with the workspace packages it imports and their
 * third-party libraries, so a service loads one file of JavaScript: no TypeScript compiler, no
 * source maps kept in memory, no module resolution across the pnpm store at start. Left out:
 * the optional native add-ons of the MongoDB driver (required inside try/catch, absent here), and
 * the packages that read their own files at run time (swagger-ui-dist serves its assets), which
 * the service resolves from its own node_modules.
 *
 * Each service is built only when services/<name>/dist/.build-hash differs from the hash of what
 * its bundle is made of: its own package and every workspace package it depends on, directly or
 * through another (sources and package.json, tests left out), the lockfile and this script.
 * `pnpm start` and the jest global set-up (for the tests that start services as processes) call
 * this before they start any: after an edit to one service only that one is built again, and with
 * nothing changed a call costs the hashes.
 */
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { build, type Plugin } from 'esbuild';

const ROOT = path.resolve(__dirname, '..');
const HASH_FILE = '.build-hash';

/** Optional dependencies of the MongoDB driver and of ws/undici: never installed here. */
const OPTIONAL = [
  'kerberos',
  '@mongodb-js/zstd',
  '@aws-sdk/credential-providers',
  'gcp-metadata',
  'snappy',
  'socks',
  'aws4',
  'mongodb-client-encryption',
  'bufferutil',
  'utf-8-validate',
];
/** Packages that find their own files at run time: required from node_modules, not bundled. */
const RESOLVED_AT_RUN_TIME = ['swagger-ui-dist'];

export const SERVICE_NAMES = readdirSync(path.join(ROOT, 'services')).filter((name) =>
  existsSync(path.join(ROOT, 'services', name, 'src/main.ts')),
);

export function bundlePath(service: string): string {
  return path.join(ROOT, 'services', service, 'dist/main.js');
}

function filesUnder(entry: string, into: string[] = []): string[] {
  if (!existsSync(entry)) return into;
  if (!statSync(entry).isDirectory()) {
    if (/\.(ts|json)$/.test(entry) && !/\.(spec|test)\.ts$/.test(entry)) into.push(entry);
    return into;
  }
  for (const child of readdirSync(entry).sort()) {
    if (child === 'node_modules' || child === 'dist' || child === 'test') continue;
    filesUnder(path.join(entry, child), into);
  }
  return into;
}

/** Workspace package name -> its directory (packages/* and services/*). */
function workspacePackages(): Map<string, string> {
  const packages = new Map<string, string>();
  for (const dir of ['packages', 'services'])
    for (const name of readdirSync(path.join(ROOT, dir))) {
      const manifest = path.join(ROOT, dir, name, 'package.json');
      if (existsSync(manifest))
        packages.set(
          (JSON.parse(readFileSync(manifest, 'utf8')) as { name: string }).name,
          path.dirname(manifest),
        );
    }
  return packages;
}

/** The service's directory and those of the workspace packages it depends on at run time, transitively. */
function packageDirs(service: string, packages: Map<string, string>): string[] {
  const dirs = new Set<string>();
  const visit = (dir: string) => {
    if (dirs.has(dir)) return;
    dirs.add(dir);
    const { dependencies = {} } = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8')) as {
      dependencies?: Record<string, string>;
    };
    for (const [name, version] of Object.entries(dependencies))
      if (version.startsWith('workspace:') && packages.has(name)) visit(packages.get(name)!);
  };
  visit(path.join(ROOT, 'services', service));
  return [...dirs].sort();
}

/** The hash of what one service's bundle is made of. */
function sourceHash(service: string, packages: Map<string, string>): string {
  const hash = createHash('sha256');
  const inputs = [
    path.join(ROOT, 'pnpm-lock.yaml'),
    __filename,
    ...packageDirs(service, packages).flatMap((dir) => filesUnder(dir)),
  ];
  for (const file of inputs) hash.update(path.relative(ROOT, file)).update('\0').update(readFileSync(file));
  return hash.digest('hex');
}

/**
 * A workspace source that uses `__dirname` (the console's build directory) means its own
 * directory: in the bundle, `__dirname` is the bundle's, so it is rewritten to the source's
 * directory relative to the bundle.
 */
function sourceDirname(outdir: string): Plugin {
  return {
    name: 'source-dirname',
    setup(builder) {
      builder.onLoad({ filter: /\.ts$/ }, (args) => {
        if (args.path.includes(`${path.sep}node_modules${path.sep}`)) return undefined;
        const text = readFileSync(args.path, 'utf8');
        if (!text.includes('__dirname')) return undefined;
        const relative = path.relative(outdir, path.dirname(args.path)).split(path.sep).join('/');
        return {
          loader: 'ts',
          contents: text.replace(
            /\b__dirname\b/g,
            `require('node:path').join(__dirname, ${JSON.stringify(relative)})`,
          ),
        };
      });
    },
  };
}

async function buildOne(service: string): Promise<void> {
  const outfile = bundlePath(service);
  await build({
    entryPoints: [path.join(ROOT, 'services', service, 'src/main.ts')],
    outfile,
    bundle: true,
    platform: 'node',
    target: 'node20',
    format: 'cjs',
    // Minified: V8 keeps every script's source in the heap (7 MB a service unminified). Class and
    // function names stay (logs, errors and metrics name them); main.js.map beside the bundle
    // maps a stack trace back to the sources (`node --enable-source-maps`, off by default: it
    // holds the map in memory).
    minify: true,
    keepNames: true,
    sourcemap: 'linked',
    sourcesContent: false,
    external: [...OPTIONAL, ...RESOLVED_AT_RUN_TIME],
    plugins: [sourceDirname(path.dirname(outfile))],
    logLevel: 'warning',
    legalComments: 'none',
  });
}

const hashFile = (service: string) => path.join(path.dirname(bundlePath(service)), HASH_FILE);

/**
 * The services among `services` whose bundle is missing or was not built from their sources as
 * they are now (every one with `force`), each with the hash of those sources.
 */
export function staleServices(
  services: readonly string[] = SERVICE_NAMES,
  { force = false } = {},
): { service: string; hash: string }[] {
  const packages = workspacePackages();
  return services
    .map((service) => ({ service, hash: sourceHash(service, packages) }))
    .filter(
      ({ service, hash }) =>
        force ||
        !existsSync(bundlePath(service)) ||
        !existsSync(hashFile(service)) ||
        readFileSync(hashFile(service), 'utf8').trim() !== hash,
    );
}

/** Builds each service whose bundle is missing or stale (every one with `force`); returns those it built. */
export async function buildServices({ force = false } = {}): Promise<string[]> {
  const stale = staleServices(SERVICE_NAMES, { force });
  await Promise.all(stale.map(({ service }) => buildOne(service)));
  for (const { service, hash } of stale) writeFileSync(hashFile(service), `${hash}\n`);
  return stale.map(({ service }) => service);
}

if (require.main === module) {
  const started = Date.now();
  buildServices({ force: process.argv.includes('--force') }).then(
    (built) =>
      process.stdout.write(
        built.length > 0
          ? `[build] ${built.join(', ')} in ${Date.now() - started} ms: services/<name>/dist/main.js\n`
          : '[build] every service bundle is current\n',
      ),
    (error: unknown) => {
      process.stderr.write(`[build] failed: ${String(error)}\n`);
      process.exit(1);
    },
  );
}
