import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { selectTests, type Workspace } from '../../scripts/lib/changed-tests';

const REPO = path.resolve(__dirname, '../..');

/** The checkout as `pnpm test:changed` sees it. */
const checkout: Workspace = {
  files: execFileSync('git', ['ls-files', '--cached', '--others', '--exclude-standard'], {
    cwd: REPO,
    encoding: 'utf8',
  })
    .split('\n')
    .filter(Boolean),
  read: (file) => readFileSync(path.join(REPO, file), 'utf8'),
  entryOf: (dir) =>
    path.posix.join(dir, JSON.parse(readFileSync(path.join(REPO, dir, 'package.json'), 'utf8')).main),
  isTest: (file) => /\.(spec|test)\.ts$/.test(file),
};

describe('pnpm test:changed: the tests a change touches', () => {
  it("hands changed code to jest's import graph, and adds the tests that run it in a spawned process", () => {
    const selection = selectTests(['services/catalog/src/main.ts'], checkout);
    expect(selection.whole).toBe(false);
    expect(selection.related).toEqual(
      expect.arrayContaining([
        'services/catalog/src/main.ts',
        'test/e2e/graceful-shutdown.test.ts',
        'test/e2e/crash-recovery.test.ts',
        'test/e2e/demo.test.ts',
        'test/e2e/memory-budget.test.ts',
      ]),
    );
  });

  it('runs a test by the files it reads: fuzzing hooks, manifests, the configuration reference', () => {
    const selection = selectTests(
      [
        'test/e2e/schemathesis/pack_fuzz_hooks.py',
        'test/e2e/schemathesis/schemathesis.toml',
        'deploy/k8s/catalog.yaml',
        'docs/reference/configuration.md',
      ],
      checkout,
    );
    expect(selection.related).toEqual(
      expect.arrayContaining([
        'test/e2e/schemathesis.test.ts',
        'test/deploy/load.ts',
        'test/docs/configuration-reference.test.ts',
      ]),
    );
    // No code of a service changed: no process-spawning test is added for it.
    expect(selection.related).not.toContain('test/e2e/graceful-shutdown.test.ts');
  });

  it("stands a package's manifest in for its entry point, and runs everything for the workspace's own set-up", () => {
    expect(selectTests(['services/catalog/package.json'], checkout).related).toContain(
      'services/catalog/src/service.ts',
    );
    expect(selectTests(['pnpm-lock.yaml'], checkout).whole).toBe(true);
    expect(selectTests(['jest.config.js'], checkout).whole).toBe(true);
  });

  it('leaves out prose no test names', () => {
    // Built here: written out, this file would name it.
    const prose = `docs/${['architecture', 'md'].join('.')}`;
    expect(selectTests([prose], checkout)).toEqual({ whole: false, related: [], reasons: [] });
  });
});
