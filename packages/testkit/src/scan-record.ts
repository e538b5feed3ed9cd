import { appendFileSync } from 'node:fs';
import path from 'node:path';
import { REPO_ROOT } from './repo';

/**
 * The suite-wide leak scan ("a leak scan of every response and log line of the whole
 * suite for every seeded secret finds nothing"). jest's global set-up makes a directory and names
 * it in this variable; while it is set, each process of the run writes there:
 * - `secrets-<pid>.jsonl`: every secret a test made with seededSecret (with the test file),
 * - `responses-<pid>.jsonl`: every HTTP response body test code received (capture-responses.ts),
 * - `log-<pid>.jsonl`: every log line of every service at debug level (@pack/logging, through
 *   PACK_LOG_COPY_DIR, set to the same directory),
 * - `spans-<pid>.jsonl`: every OTLP export request a stack's collector received (traces.ts).
 * The global teardown scans every response, log line and span for every seeded secret (scanSuite).
 */
export const LEAK_SCAN_DIR_ENV = 'PACK_LEAK_SCAN_DIR';

export interface SeededRecord {
  label: string;
  /** The secret material (the part no one may see; a public prefix and a shown suffix excluded). */
  secret: string;
  /** The test file that made it, from the repository root. */
  file: string;
}

export interface ResponseRecord {
  file: string;
  test: string;
  /** Who the request spoke as (a principal's role and name, a token, no one). */
  caller?: string;
  method: string;
  url: string;
  status: number;
  body: string;
}

/** The test file and test that run now (jest's expect state), from the repository root. */
export function currentTest(): { file: string; test: string } {
  const state = (
    globalThis as { expect?: { getState(): { testPath?: string; currentTestName?: string } } }
  ).expect?.getState();
  return {
    file: state?.testPath ? path.relative(REPO_ROOT, state.testPath) : `pid ${process.pid}`,
    test: state?.currentTestName ?? '(outside a test)',
  };
}

/** Appends one JSON line to this process's `<kind>-<pid>.jsonl` of the run's scan directory. */
export function recordForScan(kind: 'secrets' | 'responses' | 'spans', record: object): void {
  const dir = process.env[LEAK_SCAN_DIR_ENV];
  if (dir) appendFileSync(path.join(dir, `${kind}-${process.pid}.jsonl`), `${JSON.stringify(record)}\n`);
}

/**
 * Static files the gateway serves (the console's and the API reference's scripts, styles, fonts,
 * images) are built code, not data: no request can put a secret in them, and a megabyte of
 * minified script holds many 6-character runs of any alphabet, which would read as fragments.
 */
export function isStaticAsset(contentType: string | null | undefined): boolean {
  return /javascript|text\/css|^font\/|^image\/|wasm/i.test(contentType ?? '');
}
