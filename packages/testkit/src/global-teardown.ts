import { rmSync } from 'node:fs';
import { LEAK_SCAN_DIR_ENV, scanSuite } from './suite-scan';

/**
 * jest globalTeardown: stops what the set-up started, then the suite-wide leak scan: every
 * response and log line of the run against every seeded secret. A leak fails the run.
 */
/** How many leaks the failure lists (the first found: one per secret and place). */
const SHOWN = 20;

export default async function globalTeardown(): Promise<void> {
  await (globalThis as { __packInfraStop?: () => Promise<void> }).__packInfraStop?.();
  const dir = process.env[LEAK_SCAN_DIR_ENV];
  if (!dir) return;
  const started = Date.now();
  const scan = scanSuite(dir);
  const figures = `${scan.secrets} seeded secrets, ${scan.responses} responses, ${scan.logLines} log lines, ${scan.spans} spans, ${Date.now() - started} ms`;
  if (!process.env.PACK_LEAK_SCAN_KEEP) rmSync(dir, { recursive: true, force: true });
  if (scan.leaks.length === 0) {
    process.stderr.write(`\nleak scan: nothing found (${figures})\n`);
    return;
  }
  const shown = scan.leaks.slice(0, SHOWN);
  const more = scan.leaks.length - shown.length;
  throw new Error(
    `leak scan: ${scan.leaks.length} leak(s) of seeded secrets (${figures}):\n- ${shown.join('\n- ')}` +
      (more > 0 ? `\n... and ${more} more (PACK_LEAK_SCAN_KEEP=1 keeps the scanned files)` : ''),
  );
}
