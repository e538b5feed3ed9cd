/**
 * Which tests a change touches (`pnpm test:changed`). Jest follows imports (`--findRelatedTests`,
 * which `--changedSince` uses too); this adds what imports do not show:
 *
 * - Code run in a spawned process (a service's main.ts, a script, the compiled runtime): a test
 *   that spawns one runs whenever the code of a workspace package or a script changes.
 * - Files read rather than imported (YAML, TOML, Python hooks, patches): the test-side files
 *   that name them (their path, file name or a folder of two segments or more) stand in for them.
 * - A package's manifest: its entry point stands in for it, so every importer runs.
 * - The workspace's own set-up (root manifest, lockfile, jest or TypeScript config): everything.
 */
import path from 'node:path';

/** A file jest's haste map holds and follows imports of. */
export const IMPORTABLE = /\.(ts|tsx|js|cjs|mjs|mts|json)$/;
/** Root files whose change can alter any test: the whole suite runs. */
export const WHOLE_SUITE =
  /^(package\.json|pnpm-lock\.yaml|pnpm-workspace\.yaml|jest\.config\.js|tsconfig(\.base)?\.json|\.npmrc)$/;
/** A call that runs workspace code in another process. */
export const SPAWNS = /\b(spawnService|spawnEntryPoint|startRuntime)\(/;
/** Code a spawned process may load: a package's or service's sources, and the scripts. */
const SPAWNED_CODE = /^((packages|services)\/[^/]+\/src\/|scripts\/)/;
/** Markdown is prose: it is named by tests only by its own path or name. */
const PROSE = /\.md$/;

export interface Workspace {
  /** Every file of the checkout (tracked and untracked, not ignored), relative to its root. */
  files: string[];
  /** The text of a file of the checkout. */
  read(file: string): string;
  /** A workspace package's entry point (its manifest's `main`), when it has one. */
  entryOf(packageDir: string): string | undefined;
  /** Whether a test file is one of jest's (its testMatch under its roots). */
  isTest(file: string): boolean;
}

export interface Selection {
  /** Everything runs: a change to the workspace's own set-up. */
  whole: boolean;
  /** Files whose related tests run (jest's --findRelatedTests): changed code and its stand-ins. */
  related: string[];
  /** Why each stand-in was added, one line each, for the run's header. */
  reasons: string[];
}

/** Test-side files: tests, their helpers and the test kit, where a read file may be named. */
const testSide = (file: string) =>
  IMPORTABLE.test(file) &&
  !file.endsWith('.json') &&
  (file.startsWith('test/') ||
    /^(packages|services)\/[^/]+\/test\//.test(file) ||
    file.startsWith('packages/testkit/'));

/** What a read file is called by: its path, its name, and its folders of two segments or more. */
export function namesOf(file: string): string[] {
  const names = [file, path.posix.basename(file)];
  if (PROSE.test(file)) return names;
  const parts = file.split('/');
  for (let depth = parts.length - 1; depth >= 2; depth--) names.push(`${parts.slice(0, depth).join('/')}/`);
  return names;
}

const packageDirOf = (file: string) => /^((packages|services)\/[^/]+)\/package\.json$/.exec(file)?.[1];

export function selectTests(changed: string[], workspace: Workspace): Selection {
  const present = new Set(workspace.files);
  const selection: Selection = { whole: false, related: [], reasons: [] };
  const related = new Set<string>();
  const sources = workspace.files.filter(testSide);
  const texts = new Map<string, string>();
  const textOf = (file: string) => texts.get(file) ?? texts.set(file, workspace.read(file)).get(file)!;

  for (const file of changed) {
    if (WHOLE_SUITE.test(file)) {
      selection.whole = true;
      selection.reasons.push(`${file}: the workspace's set-up, every test`);
      continue;
    }
    const manifestOf = packageDirOf(file);
    if (manifestOf) {
      const entry = workspace.entryOf(manifestOf);
      if (entry) related.add(entry);
      selection.reasons.push(`${file}: its entry point ${entry ?? '(none)'}`);
      continue;
    }
    if (IMPORTABLE.test(file) && !file.endsWith('.json')) {
      if (present.has(file)) related.add(file);
      continue;
    }
    const names = namesOf(file);
    const naming = sources.filter((source) => names.some((name) => textOf(source).includes(name)));
    for (const source of naming) related.add(source);
    if (naming.length) selection.reasons.push(`${file}: named by ${naming.join(', ')}`);
    else if (present.has(file) && workspace.isTest(file)) related.add(file);
  }

  if (changed.some((file) => SPAWNED_CODE.test(file) && !file.startsWith('packages/testkit/'))) {
    // The test kit defines the spawning calls; its importers are every test.
    const spawning = sources.filter(
      (source) => !source.startsWith('packages/testkit/') && SPAWNS.test(textOf(source)),
    );
    for (const source of spawning) related.add(source);
    selection.reasons.push(`code a spawned process runs: ${spawning.join(', ')}`);
  }
  selection.related = [...related].sort();
  return selection;
}
