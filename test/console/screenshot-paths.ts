import path from 'node:path';

/** Every picture a browser test takes (kept by CI as artifacts; not committed). */
export const SCREENSHOTS = path.join(__dirname, 'screenshots');
/**
 * The picture of each console page the guides show (named as the page's path): written by the
 * browser test that photographs the page, every run, so a changed page shows in `git diff`.
 */
export const PAGE_SCREENSHOTS = path.join(__dirname, '..', '..', 'docs', 'screenshots');
