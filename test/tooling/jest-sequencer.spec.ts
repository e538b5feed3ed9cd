import { existsSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';

const REPO = path.resolve(__dirname, '../..');
// eslint-disable-next-line @typescript-eslint/no-require-imports
const Sequencer = require('../../scripts/jest-sequencer.js');
// eslint-disable-next-line @typescript-eslint/no-require-imports
const heavy: Record<string, unknown> = require('../../scripts/jest-heavy-files.json');

interface FakeTest {
  path: string;
  duration?: number;
  context: {
    config: { cacheDirectory: string; name: string };
    hasteFS: { getSize: (file: string) => number };
  };
}

describe('the jest sequencer: known-heavy files first in a fresh clone', () => {
  const cacheDirectory = mkdtempSync(path.join(tmpdir(), 'pack-sequencer-'));
  afterAll(() => rmSync(cacheDirectory, { recursive: true, force: true }));

  const testOf = (file: string): FakeTest => ({
    path: path.join(REPO, file),
    context: {
      // An empty cache directory: no timings of an earlier run, as on CI.
      config: { cacheDirectory, name: 'fresh' },
      hasteFS: { getSize: (absolute) => statSync(absolute).size },
    },
  });

  it('names only files that exist', () => {
    const missing = Object.keys(heavy).filter(
      (file) => !file.startsWith('$') && !existsSync(path.join(REPO, file)),
    );
    expect(missing).toEqual([]);
  });

  it('starts the longest listed file first, then files it knows nothing of, largest first', () => {
    const files = [
      'packages/contracts/src/text.spec.ts',
      'test/e2e/memory-budget.test.ts',
      'test/tooling/changed-tests.spec.ts',
      'test/e2e/schemathesis.test.ts',
    ];
    const sorted: FakeTest[] = new Sequencer({ contexts: [], globalConfig: {} }).sort(files.map(testOf));
    const order = sorted.map((test) => path.relative(REPO, test.path));
    const unlisted = files.slice(0, 3).filter((file) => !(file in heavy));
    const bySize = [...unlisted].sort(
      (a, b) => statSync(path.join(REPO, b)).size - statSync(path.join(REPO, a)).size,
    );
    expect(order).toEqual(['test/e2e/schemathesis.test.ts', 'test/e2e/memory-budget.test.ts', ...bySize]);
  });
});
