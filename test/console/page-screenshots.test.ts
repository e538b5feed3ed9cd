/**
 * The pictures of the console's pages in the guides (docs/screenshots) come from the browser
 * tests and keep up with the console: every page has one, a guide shows it, a browser test
 * takes it, and it carries the hash of the page sources it was taken from, which must be the
 * sources' hash now. Pixels are not compared (dates and ids differ from run to run).
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { CONSOLE_PAGES } from '@pack/console';
import { PAGE_SCREENSHOTS, pageSourcesHash, stampOf } from './screenshot-paths';

const ROOT = path.resolve(__dirname, '..', '..');
const PAGES = Object.keys(CONSOLE_PAGES);

/** Width and height from a PNG's IHDR chunk. */
function pngSize(file: string): { width: number; height: number } {
  const bytes = readFileSync(file);
  expect(bytes.subarray(1, 4).toString('latin1')).toBe('PNG');
  return { width: bytes.readUInt32BE(16), height: bytes.readUInt32BE(20) };
}

const guides = () =>
  [
    path.join(ROOT, 'README.md'),
    ...readdirSync(path.join(ROOT, 'docs')).map((f) => path.join(ROOT, 'docs', f)),
  ]
    .filter((file) => file.endsWith('.md'))
    .map((file) => readFileSync(file, 'utf8'))
    .join('\n');

const browserTests = () =>
  readdirSync(__dirname)
    .filter((file) => file.endsWith('.test.ts') && file !== path.basename(__filename))
    .map((file) => readFileSync(path.join(__dirname, file), 'utf8'))
    .join('\n');

describe('the screenshots of the console pages', () => {
  it('has one per page, 1280 px wide as the browser tests take them, and no other', () => {
    const missing = PAGES.filter((page) => !existsSync(path.join(PAGE_SCREENSHOTS, `${page}.png`)));
    expect(missing).toEqual([]);
    for (const page of PAGES)
      expect({ page, width: pngSize(path.join(PAGE_SCREENSHOTS, `${page}.png`)).width }).toEqual({
        page,
        width: 1280,
      });
    const extra = readdirSync(PAGE_SCREENSHOTS).filter((file) => !PAGES.includes(file.replace(/\.png$/, '')));
    expect(extra).toEqual([]);
  });

  it('shows each in a guide, and a browser test takes each', () => {
    const text = guides();
    expect(PAGES.filter((page) => !text.includes(`screenshots/${page}.png`))).toEqual([]);
    const tests = browserTests();
    expect(PAGES.filter((page) => !tests.includes(`screenshot('${page}')`))).toEqual([]);
  });

  it('shows each page as its sources are now (run `npx jest test/console` and commit docs/screenshots)', () => {
    const now = pageSourcesHash();
    const stale = PAGES.filter(
      (page) => stampOf(readFileSync(path.join(PAGE_SCREENSHOTS, `${page}.png`))) !== now,
    );
    expect(stale).toEqual([]);
  });
});
