/**
 * `pnpm test:changed [BASE] [-- jest options]`: the tests a change touches, for the loop between
 * commits. The change is everything that differs from where the branch left BASE (default: main,
 * else origin/main), committed or not, untracked files included. Which tests that is:
 * scripts/lib/changed-tests.ts. `--list` prints them instead of running them.
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { selectTests, type Workspace } from './lib/changed-tests';

const REPO = path.resolve(__dirname, '..');
const git = (...args: string[]) =>
  execFileSync('git', args, { cwd: REPO, encoding: 'utf8' }).split('\n').filter(Boolean);

function baseOf(requested: string | undefined): string {
  for (const candidate of requested ? [requested] : ['main', 'origin/main']) {
    const found = spawnSync('git', ['rev-parse', '--verify', '--quiet', candidate], { cwd: REPO });
    const [base] = found.status === 0 ? git('merge-base', candidate, 'HEAD') : [];
    if (base) return base;
  }
  throw new Error(`no ${requested ?? 'main or origin/main'} to compare with: name a branch or commit`);
}

const workspace: Workspace = {
  files: git('ls-files', '--cached', '--others', '--exclude-standard'),
  read: (file) => (existsSync(path.join(REPO, file)) ? readFileSync(path.join(REPO, file), 'utf8') : ''),
  entryOf: (dir) => {
    const main = (JSON.parse(readFileSync(path.join(REPO, dir, 'package.json'), 'utf8')) as { main?: string })
      .main;
    return main ? path.posix.join(dir, main) : undefined;
  },
  isTest: (file) => /\.(spec|test)\.ts$/.test(file),
};

function main(argv: string[]) {
  const dashes = argv.indexOf('--');
  const own = dashes < 0 ? argv : argv.slice(0, dashes);
  const jestOptions = dashes < 0 ? [] : argv.slice(dashes + 1);
  const list = own.includes('--list');
  const base = baseOf(own.find((arg) => !arg.startsWith('--')));
  const changed = [
    ...new Set([...git('diff', '--name-only', base), ...git('ls-files', '--others', '--exclude-standard')]),
  ];
  const selection = selectTests(changed, workspace);
  process.stderr.write(
    `[test:changed] ${changed.length} files differ from ${base.slice(0, 10)}\n${selection.reasons.map((line) => `  ${line}\n`).join('')}`,
  );
  if (!selection.whole && !selection.related.length) {
    process.stderr.write('[test:changed] no test reaches the change\n');
    return 0;
  }
  const args = selection.whole ? [] : ['--findRelatedTests', ...selection.related, '--passWithNoTests'];
  const jest = spawnSync(
    process.execPath,
    [require.resolve('jest/bin/jest'), ...(list ? ['--listTests'] : []), ...jestOptions, ...args],
    { cwd: REPO, stdio: 'inherit' },
  );
  return jest.status ?? 1;
}

process.exitCode = main(process.argv.slice(2));
