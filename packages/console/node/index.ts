/**
 * The console as node sees it: where its build lives, whether that build is current, and how to
 * make it. The gateway serves CONSOLE_DIST_DIR; `pnpm start` and the browser tests call
 * ensureConsoleBuilt(). Only node built-ins here: the gateway imports this module.
 */
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import path from 'node:path';

export const CONSOLE_DIR = path.resolve(__dirname, '..');
export const CONSOLE_DIST_DIR = path.join(CONSOLE_DIR, 'dist');
/** Written beside the build: the hash of the sources it was built from. */
export const BUILD_HASH_FILE = '.build-hash';

/** What the bundle is made of: the console's sources and configuration, and the contracts it imports. */
const INPUTS = [
  path.join(CONSOLE_DIR, 'src'),
  path.join(CONSOLE_DIR, 'index.html'),
  path.join(CONSOLE_DIR, 'public'),
  path.join(CONSOLE_DIR, 'vite.config.mts'),
  path.join(CONSOLE_DIR, 'package.json'),
  path.resolve(CONSOLE_DIR, '../contracts/src'),
];

function filesUnder(entry: string): string[] {
  if (!existsSync(entry)) return [];
  if (!statSync(entry).isDirectory()) return [entry];
  return readdirSync(entry, { withFileTypes: true })
    .filter((child) => !child.name.endsWith('.spec.ts'))
    .flatMap((child) => filesUnder(path.join(entry, child.name)));
}

/** A content hash of every input (paths and bytes): a change anywhere makes the build stale. */
export function consoleSourceHash(): string {
  const hash = createHash('sha256');
  for (const file of INPUTS.flatMap(filesUnder).sort()) {
    hash.update(path.relative(CONSOLE_DIR, file)).update('\0').update(readFileSync(file)).update('\0');
  }
  return hash.digest('hex');
}

export type BuildState = 'missing' | 'stale' | 'fresh';

export function consoleBuildState(dist = CONSOLE_DIST_DIR): BuildState {
  if (!existsSync(path.join(dist, 'index.html'))) return 'missing';
  const built = existsSync(path.join(dist, BUILD_HASH_FILE))
    ? readFileSync(path.join(dist, BUILD_HASH_FILE), 'utf8').trim()
    : '';
  return built === consoleSourceHash() ? 'fresh' : 'stale';
}

/** Builds with vite into a fresh folder and swaps it in, so the old build is served until then. */
export function buildConsole(): void {
  const hash = consoleSourceHash();
  const out = `${CONSOLE_DIST_DIR}.${process.pid}.tmp`;
  rmSync(out, { recursive: true, force: true });
  const vite = path.join(
    path.dirname(require.resolve('vite/package.json', { paths: [CONSOLE_DIR] })),
    'bin/vite.js',
  );
  execFileSync(process.execPath, [vite, 'build', '--outDir', out, '--emptyOutDir', '--logLevel', 'warn'], {
    cwd: CONSOLE_DIR,
    // Jest sets NODE_ENV=test, which would make vite build libraries' development code in.
    env: { ...process.env, NODE_ENV: 'production' },
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  writeFileSync(path.join(out, BUILD_HASH_FILE), `${hash}\n`);
  rmSync(CONSOLE_DIST_DIR, { recursive: true, force: true });
  renameSync(out, CONSOLE_DIST_DIR);
}

const LOCK_DIR = `${CONSOLE_DIST_DIR}.lock`;
/** A lock older than this was left by a process that died mid-build. */
const STALE_LOCK_MS = 5 * 60_000;

function lockAge(): number | undefined {
  try {
    return Date.now() - statSync(LOCK_DIR).mtimeMs;
  } catch {
    return undefined;
  }
}

function sleep(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/**
 * Builds the console when it is missing or older than its sources; returns what it found. One
 * process builds at a time (parallel test workers, a second `pnpm start`): the others wait.
 */
export function ensureConsoleBuilt({ timeoutMs = 180_000 } = {}): BuildState {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      mkdirSync(LOCK_DIR);
      break;
    } catch {
      const since = lockAge();
      if (since !== undefined && since > STALE_LOCK_MS) rmSync(LOCK_DIR, { recursive: true, force: true });
      if (Date.now() > deadline) throw new Error(`waited too long for another console build (${LOCK_DIR})`);
      sleep(200);
    }
  }
  try {
    const state = consoleBuildState();
    if (state !== 'fresh') buildConsole();
    return state;
  } finally {
    rmSync(LOCK_DIR, { recursive: true, force: true });
  }
}

export { CONSOLE_PAGES, consolePageOf, type ConsolePage } from '../src/routes';
