/**
 * `--against REV`: the dispatcher of another commit, run beside this checkout's in the same
 * bench, rounds alternated (this machine's speed drifts by a fifth within an hour, so only runs
 * side by side compare). REV is a commit (checked out in a temporary git worktree, installed
 * with pnpm offline and removed at the end) or the directory of a checkout already installed.
 * Either way its bundle is built there as `pnpm build` builds it.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

const ROOT = path.resolve(__dirname, '../..');

export interface Reference {
  tree: string;
  /** The commit the tree holds, short. */
  commit: string;
  remove(): void;
}

export function prepareReference(rev: string): Reference {
  const run = (cwd: string, command: string, args: string[]) =>
    execFileSync(command, args, { cwd, stdio: ['ignore', 'ignore', 'inherit'] });
  const commitOf = (tree: string) =>
    execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: tree, encoding: 'utf8' }).trim();
  if (existsSync(rev)) {
    run(rev, 'pnpm', ['build']);
    return { tree: path.resolve(rev), commit: commitOf(rev), remove: () => undefined };
  }
  const work = mkdtempSync(path.join(tmpdir(), 'bench-webhooks-'));
  const tree = path.join(work, 'tree');
  process.stderr.write(`[against] ${rev} in ${tree}\n`);
  run(ROOT, 'git', ['worktree', 'add', '--detach', tree, rev]);
  const remove = () => {
    try {
      run(ROOT, 'git', ['worktree', 'remove', '--force', tree]);
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
  };
  try {
    run(tree, 'pnpm', ['install', '--frozen-lockfile', '--offline']);
    run(tree, 'pnpm', ['build']);
  } catch (error) {
    remove();
    throw error;
  }
  return { tree, commit: commitOf(tree), remove };
}
