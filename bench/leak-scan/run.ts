/**
 * bench/leak-scan: what the suite-wide leak scan (testkit suite-scan.ts) adds to a test run, per
 * log line and per response, against the same work without it, in the same process.
 *
 *   log lines: a service logger at LOG_LEVEL=silent (what component tests use) writing a request
 *              line, against the same logger while PACK_LOG_COPY_DIR is set (each line
 *              serialised, redacted and appended at debug level to log-<pid>.jsonl).
 *   responses: fetch of a 2 KB JSON answer from a local server, plain, against the fetch of
 *              capture-responses.ts (caller check, body copy read, one JSON line appended).
 *   scan:      the global teardown's scan of what the two wrote, for 100 seeded secrets.
 *   stack:     a stack's own scan (testkit LeakScan, 40 seeded secrets) of each log line written,
 *              against reading the line once (lower-casing it).
 *
 *   pnpm bench:leak-scan   (LINES=n, RESPONSES=n)
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { createLogger, LOG_COPY_DIR_ENV } from '@pack/logging';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { LEAK_SCAN_DIR_ENV, LeakScan, scanSuite, seededSecret } from '@pack/testkit';

const LINES = Number(process.env.LINES ?? 20_000);
const RESPONSES = Number(process.env.RESPONSES ?? 2_000);

const line = {
  req: {
    method: 'POST',
    url: '/v1/ai/llm_models/',
    headers: { authorization: 'Token x', 'user-agent': 'undici' },
  },
  res: { statusCode: 201 },
  responseTime: 12.5,
};

function logLines(): number {
  const logger = createLogger({ service: 'bench', version: '1', level: 'silent' });
  const started = process.hrtime.bigint();
  for (let i = 0; i < LINES; i += 1) logger.info(line, 'request');
  return Number(process.hrtime.bigint() - started) / 1000 / LINES;
}

async function fetches(server: string): Promise<number> {
  const started = process.hrtime.bigint();
  for (let i = 0; i < RESPONSES; i += 1) await (await fetch(`${server}/v1/things/${i}/`)).json();
  return Number(process.hrtime.bigint() - started) / 1000 / RESPONSES;
}

async function main(): Promise<void> {
  const body = JSON.stringify({
    results: Array.from({ length: 20 }, (_, id) => ({ id, name: `thing ${id}`, note: 'x'.repeat(60) })),
  });
  const server = http.createServer((_req, res) =>
    res.writeHead(200, { 'content-type': 'application/json' }).end(body),
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const dir = mkdtempSync(path.join(os.tmpdir(), 'bench-leak-scan-'));
  try {
    await fetches(url); // warm-up
    logLines();
    const plainLog = logLines();
    const plainFetch = await fetches(url);
    process.env[LOG_COPY_DIR_ENV] = dir;
    process.env[LEAK_SCAN_DIR_ENV] = dir;
    // The setup file wraps global fetch when the scan directory is set; the jest hook it
    // registers (stopping a stack's span collector) has nothing to do outside jest.
    (globalThis as { afterAll?: (hook: () => unknown) => void }).afterAll ??= () => undefined;
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded now, after the variable is set
    require('../../packages/testkit/src/capture-responses');
    const copiedLog = logLines();
    const capturedFetch = await fetches(url);
    await new Promise((resolve) => setTimeout(resolve, 200)); // the last body copies are written
    for (let i = 0; i < 100; i += 1) seededSecret(`secret ${i}`, { length: 24 });
    const started = process.hrtime.bigint();
    const scan = scanSuite(dir);
    const scanMs = Number(process.hrtime.bigint() - started) / 1e6;
    const row = (what: string, plain: number, scanned: number) =>
      console.log(
        `${what.padEnd(10)} plain ${plain.toFixed(1).padStart(7)} µs  scanned ${scanned.toFixed(1).padStart(7)} µs  +${(scanned - plain).toFixed(1)} µs each  ratio ${(scanned / Math.max(plain, 0.001)).toFixed(1)}`,
      );
    row('log line', plainLog, copiedLog);
    row('response', plainFetch, capturedFetch);
    console.log(
      `scan       ${scan.logLines} log lines + ${scan.responses} responses against ${scan.secrets} secrets in ${scanMs.toFixed(0)} ms (${((scanMs * 1000) / (scan.logLines + scan.responses)).toFixed(1)} µs each), leaks ${scan.leaks.length}`,
    );
    stackScan(dir);
  } finally {
    server.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** A stack's LeakScan over the log lines written, against lower-casing each once. */
function stackScan(dir: string): void {
  const lines = readdirSync(dir)
    .filter((name) => name.startsWith('log-'))
    .flatMap((name) => readFileSync(path.join(dir, name), 'utf8').split('\n').filter(Boolean));
  const scan = new LeakScan();
  for (let i = 0; i < 40; i += 1) scan.seed(`secret ${i}`, randomBytes(32).toString('base64url'));
  const time = (each: (line: string) => unknown) => {
    const started = process.hrtime.bigint();
    for (const line of lines) each(line);
    return Number(process.hrtime.bigint() - started) / 1000 / lines.length;
  };
  time((line) => scan.scan('warm-up', line));
  const plain = time((line) => line.toLowerCase());
  const scanned = time((line) => scan.scan('log', line));
  console.log(
    `stack      ${lines.length} log lines against 40 secrets: lower-cased ${plain.toFixed(2)} µs, scanned ${scanned.toFixed(2)} µs each  ratio ${(scanned / Math.max(plain, 0.001)).toFixed(1)}, leaks ${scan.leaks.length}`,
  );
}

void main();
