import { mkdtempSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { uniqueName } from './env';
import { fakeId } from './fake-providers/server';
import globalTeardown from './global-teardown';
import { isStaticAsset, LEAK_SCAN_DIR_ENV, scanSuite, seededSecret } from './suite-scan';

const SECRET = 'Hq7ZpWm3xT9vLr2Hc8Nk';

/** A scan directory as a run leaves it: one worker's seeds, responses and a service's log. */
function runDirectory(responses: object[], logLines: string[]): string {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'suite-scan-spec-'));
  const seed = { label: 'the provider key', secret: SECRET, file: 'services/x/test/keys.test.ts' };
  writeFileSync(path.join(dir, 'secrets-11.jsonl'), `${JSON.stringify(seed)}\n`);
  writeFileSync(
    path.join(dir, 'responses-11.jsonl'),
    responses.map((r) => `${JSON.stringify(r)}\n`).join(''),
  );
  writeFileSync(path.join(dir, 'log-12.jsonl'), logLines.map((line) => `${line}\n`).join(''));
  return dir;
}

const response = (body: string) => ({
  file: 'services/x/test/keys.test.ts',
  test: 'keys are masked',
  caller: 'service_owner olivia',
  method: 'GET',
  url: 'http://127.0.0.1:1/v1/keys/',
  status: 200,
  body,
});

describe('the suite-wide leak scan ("a leak scan of every response and log line of the whole suite for every seeded secret finds nothing")', () => {
  const dirs: string[] = [];
  afterAll(() => dirs.forEach((dir) => rmSync(dir, { recursive: true, force: true })));

  it('reports a fragment in a response, URL-encoded and upper-cased, and in a log line, naming the seeding test file and where', () => {
    const dir = runDirectory(
      [response('{"ok":true}'), response('{"error":"refused key sk-HQ%37ZP%57M3X****"}')],
      [
        '{"level":"info","service":"llm-gateway","msg":"fine"}',
        '{"level":"warn","service":"llm-gateway","msg":"provider said ...xT9vLr2Hc8"}',
      ],
    );
    dirs.push(dir);
    const scan = scanSuite(dir);
    expect({ secrets: scan.secrets, responses: scan.responses, logLines: scan.logLines }).toEqual({
      secrets: 1,
      responses: 2,
      logLines: 2,
    });
    expect(scan.leaks).toEqual([
      'a fragment of "the provider key" (seeded by services/x/test/keys.test.ts) in the response to GET http://127.0.0.1:1/v1/keys/ (200, as service_owner olivia) received by services/x/test/keys.test.ts › keys are masked\n' +
        '    at 25: ...{"error":"refused key sk-[******]',
      'a fragment of "the provider key" (seeded by services/x/test/keys.test.ts) in the log of llm-gateway, log-12.jsonl line 2\n' +
        '    at 64: ...vel":"warn","service":"llm-gateway","msg":"provider said ...[******]',
    ]);
    expect(scan.leaks.join()).not.toMatch(/xT9vLr|HQ%37ZP/i);
  });

  it('reports a fragment in a span exported to a stack\'s collector ("the suite-wide leak scan also reads every exported span")', () => {
    const dir = runDirectory([], []);
    dirs.push(dir);
    const span = (value: string) => ({
      resourceSpans: [
        {
          resource: { attributes: [{ key: 'service.name', value: { stringValue: 'llm-gateway' } }] },
          scopeSpans: [
            {
              spans: [
                {
                  spanId: 'ab12',
                  name: 'chat',
                  attributes: [{ key: 'gen_ai.prompt', value: { stringValue: value } }],
                },
              ],
            },
          ],
        },
      ],
    });
    writeFileSync(
      path.join(dir, 'spans-13.jsonl'),
      [span('fine'), span(`key ${SECRET.slice(4, 14)}`)]
        .map((body) => `${JSON.stringify({ body: JSON.stringify(body) })}\n`)
        .join(''),
    );
    const scan = scanSuite(dir);
    expect(scan.spans).toBe(2);
    expect(scan.leaks).toHaveLength(1);
    expect(scan.leaks[0]).toMatch(
      /^a fragment of "the provider key" \(seeded by services\/x\/test\/keys.test.ts\) in a span exported to the stack's collector, spans-13.jsonl export 2\n/,
    );
  });

  it('finds nothing in masks, five characters, or other text', () => {
    const dir = runDirectory(
      [response('{"api_key":"********Hc8Nk"}'), response('{"note":"Hq7Zp only"}')],
      ['{"msg":"api_key [REDACTED]"}'],
    );
    dirs.push(dir);
    expect(scanSuite(dir).leaks).toEqual([]);
  });

  it("takes a piece inside an issued token, neither side continuing the secret, for chance; at the token's edge, a leak", () => {
    // "wm3xt9" is SECRET's, in another case, inside a 43-character API token.
    const inside = 'pack_h3Jd-Uq8yWM3XT9e_0aLw5KvXr2GtNbSc4iFoYm';
    const atEdge = 'pack_h3Jd-Uq8yWM3XT9';
    const dir = runDirectory(
      [response(`{"id":2,"token":"${inside}"}`), response(`{"id":3,"token":"${atEdge}"}`)],
      [],
    );
    dirs.push(dir);
    const { leaks } = scanSuite(dir);
    expect(leaks).toHaveLength(1);
    expect(leaks[0]).toContain('at 31: ...{"id":3,"token":"pack_h3Jd-Uq8y[******]');
  });

  it('the global teardown fails the run with the report, and passes a clean one', async () => {
    const before = process.env[LEAK_SCAN_DIR_ENV];
    // The clean scan's one line ("leak scan: nothing found") is not this run's.
    const said = jest.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      process.env[LEAK_SCAN_DIR_ENV] = runDirectory([response(`{"k":"${SECRET.toLowerCase()}"}`)], []);
      await expect(globalTeardown()).rejects.toThrow(
        /^leak scan: 1 leak\(s\) of seeded secrets \(1 seeded secrets, 1 responses, 0 log lines, 0 spans, \d+ ms\):\n- a fragment of "the provider key"/,
      );
      process.env[LEAK_SCAN_DIR_ENV] = runDirectory([response('{"k":"********Hc8Nk"}')], []);
      await expect(globalTeardown()).resolves.toBeUndefined();
      expect(said).toHaveBeenCalledWith(
        expect.stringMatching(/^\nleak scan: nothing found \(1 seeded secrets, 1 responses/),
      );
    } finally {
      said.mockRestore();
      if (before === undefined) delete process.env[LEAK_SCAN_DIR_ENV];
      else process.env[LEAK_SCAN_DIR_ENV] = before;
    }
  });

  /** Runs `seeding` with the scan directory set to a new one (restored after); the directory. */
  function withScanDir(seeding: (dir: string) => void): string {
    const before = process.env[LEAK_SCAN_DIR_ENV];
    const dir = mkdtempSync(path.join(os.tmpdir(), 'suite-scan-spec-'));
    dirs.push(dir);
    try {
      process.env[LEAK_SCAN_DIR_ENV] = dir;
      seeding(dir);
    } finally {
      if (before === undefined) delete process.env[LEAK_SCAN_DIR_ENV];
      else process.env[LEAK_SCAN_DIR_ENV] = before;
    }
    return dir;
  }

  it('seededSecret makes a random secret, records its material with the test file, and never a hex-looking piece', () => {
    const dir = withScanDir((dir) => {
      const key = seededSecret('a key', { prefix: 'sk-', suffix: '1111' });
      expect(key).toMatch(/^sk-[A-Za-z0-9]{20}1111$/);
      const recorded = readFileSync(path.join(dir, `secrets-${process.pid}.jsonl`), 'utf8');
      expect(JSON.parse(recorded)).toEqual({
        label: 'a key',
        secret: key.slice(3),
        file: 'packages/testkit/src/suite-scan.spec.ts',
      });
      for (let round = 0; round < 200; round += 1)
        expect(seededSecret('another', { length: 30 })).not.toMatch(/[0-9a-f]{6}/i);
    });
    expect(existsSync(dir)).toBe(true);
  });

  it('seededSecret never makes a piece that an id joining hex and decimal with one letter could hold', () => {
    withScanDir(() => {
      // A resend's message id, `msg_1_rcv<32 hex>x1000`, once matched a key seeded with '0001'.
      for (const options of [{ suffix: '0001' }, { suffix: 'rd-1' }, { suffix: '42' }, { length: 40 }])
        for (let round = 0; round < 100; round += 1) {
          const material = seededSecret('an id-shaped key', options);
          for (let at = 0; at + 6 <= material.length; at += 1)
            expect(material.slice(at, at + 6)).toMatch(/[^0-9a-f][0-9a-f]*[^0-9a-f]/i);
        }
    });
  });

  it("the testkit's own ids are hex after their prefix, so a logged id never reads as a piece of a seeded secret", () => {
    // A fake provider's thread id in a logged URL, then a base-36 timestamp, once matched 6
    // characters of a seeded key (CI of 2026-11-27).
    for (const id of [fakeId('thread_'), fakeId('chatcmpl-'), uniqueName('t_catalog')])
      expect(id.replace(/^(thread_|chatcmpl-|t_catalog_)/, '')).toMatch(/^[0-9a-f]{12,}$/);
  });
});

describe('what the response capture leaves out', () => {
  it('skips built scripts, styles, fonts and images, and keeps JSON, problem+json, HTML and text', () => {
    const skipped = [
      'application/javascript; charset=utf-8',
      'text/javascript',
      'text/css',
      'font/woff2',
      'image/png',
      'application/wasm',
    ];
    const kept = [
      'application/json',
      'application/problem+json',
      'text/html; charset=utf-8',
      'text/plain',
      null,
    ];
    expect(skipped.filter((type) => !isStaticAsset(type))).toEqual([]);
    expect(kept.filter((type) => isStaticAsset(type))).toEqual([]);
  });
});
