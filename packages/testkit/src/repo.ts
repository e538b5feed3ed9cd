import { existsSync } from 'node:fs';
import path from 'node:path';

/**
 * Where the repository is, handed down by its root: PACK_REPO_ROOT, which the root's
 * jest.config.js sets for the suite (and its workers inherit), else the working directory (pnpm
 * runs the root's scripts and benches from the root). The test kit never reaches above its own
 * package for the repository's scripts (infra.sh, deps.sh): they are the root's, not the kit's.
 */
export const REPO_ROOT_ENV = 'PACK_REPO_ROOT';

export const REPO_ROOT = path.resolve(process.env[REPO_ROOT_ENV] ?? process.cwd());

/** A script of the repository's `scripts/` folder (`infra.sh`, `deps.sh`, ...); throws when it is not there. */
export function repoScript(name: string): string {
  const file = path.join(REPO_ROOT, 'scripts', name);
  if (!existsSync(file))
    throw new Error(
      `${file} does not exist: run from the repository's root or set ${REPO_ROOT_ENV} to it (its jest.config.js does)`,
    );
  return file;
}
