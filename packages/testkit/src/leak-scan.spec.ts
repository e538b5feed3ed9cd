import { LeakScan } from './leak-scan';

const SECRET = 'Kq7/Zp+Wm3xT9vLr2Hc8';

const found = (text: string) => new LeakScan().seed('the key', SECRET).scan('here', text);

describe('LeakScan ("matching any 6-character or longer fragment of a secret, in any letter case, URL- or JSON-encoded")', () => {
  it.each([
    ['the whole secret', `key=${SECRET}`],
    ['six characters of it', 'Incorrect API key provided: Wm3xT9********'],
    ['its first six, cut', 'sk-Kq7/Zp...'],
    ['it lower-cased', `token ${SECRET.toLowerCase()}`],
    ['it upper-cased', `TOKEN ${SECRET.toUpperCase()}`],
    ['it percent-encoded', 'u=Kq7%2FZp%2BWm3'],
    ['it JSON-escaped', '{"k":"Kq7\\/Zp\\u002bWm3"}'],
  ])('finds %s', (_what, text) => {
    expect(found(text).map((leak) => leak.secret)).toEqual(['the key']);
  });

  it.each([
    ['five characters of it', 'ends in Kq7/Z only'],
    ['its mask', '********Hc8'],
    ['other text', 'Incorrect API key provided'],
  ])('finds nothing in %s', (_what, text) => {
    expect(found(text)).toEqual([]);
  });

  it('reports where and which secret, with the fragment starred, never the fragment', () => {
    const scan = new LeakScan().seed('the key', SECRET);
    scan.scan('GET /x as owner', `error: ${SECRET}`);
    expect(scan.report()).toEqual(['GET /x as owner: a fragment of the key at 7: error: [******]']);
    expect(scan.report().join()).not.toContain('Kq7/Zp');
  });

  it('scans every line written to its log destination, also when lines arrive in pieces', async () => {
    const scan = new LeakScan().seed('the key', SECRET);
    const log = scan.logDestination('stack log');
    log.write('{"msg":"fine"}\n{"msg":"provider said Kq7/');
    log.write('Zp+W bad"}\n');
    await new Promise<void>((resolve) => log.end(resolve));
    expect(log.lines).toHaveLength(2);
    expect(scan.report()).toEqual([
      'stack log line 2: a fragment of the key at 22: {"msg":"provider said [******]',
    ]);
  });

  it('refuses to seed a secret too short to scan for', () => {
    expect(() => new LeakScan().seed('short', 'abc12')).toThrow(/shorter than 6/);
  });
});

describe('LeakScan.seedFrom', () => {
  it('seeds every secret-named field at any depth, without its public prefix, and no mask', () => {
    const scan = new LeakScan();
    const added = scan.seedFrom(
      {
        name: 'Visible name',
        authorization: 'Bearer Zq81mPx0Lw',
        extra_data: { api_key: 'sk-Hv5Tn2Qa9Y', base_url: 'https://example.com' },
        settings: [{ EMAIL_HOST_PASSWORD: 'Pw7Jk3Lr0M' }],
        secret: '********abcd',
        token: 'short',
      },
      'POST /x',
    );
    expect(added).toBe(3);
    expect([...scan.secrets.entries()]).toEqual([
      ['authorization of POST /x', 'Zq81mPx0Lw'],
      ['extra_data.api_key of POST /x', 'Hv5Tn2Qa9Y'],
      ['settings.0.EMAIL_HOST_PASSWORD of POST /x', 'Pw7Jk3Lr0M'],
    ]);
    expect(scan.scan('log', 'Bearer in the log, Visible name, sk-Hv5')).toEqual([]);
    expect(scan.scan('log', 'said Hv5Tn2').map((leak) => leak.secret)).toEqual([
      'extra_data.api_key of POST /x',
    ]);
  });
});

it('finds a secret seeded after the log line was written, once rescanned, and reports it once', () => {
  const scan = new LeakScan();
  const log = scan.logDestination('late');
  log.write('{"msg":"said Qm4Zt8Wc"}\n');
  scan.seed('late secret', 'Qm4Zt8Wc');
  expect(scan.report()).toEqual([]);
  scan.rescanLogs();
  scan.rescanLogs();
  expect(scan.report()).toEqual(['late line 1: a fragment of late secret at 13: {"msg":"said [******]']);
  expect(scan.lines).toBe(1);
});

it('looks for no piece of a readable secret that could be a word, when seeded from a body', () => {
  const scan = new LeakScan();
  scan.seedFrom({ password: 'e2e-smtp-PLAINTEXT-pw' }, 'PATCH /settings');
  expect(scan.scan('log', 'GET /v1/core/general_settings/plaintext/ smtp-settings')).toEqual([]);
  expect(scan.scan('log', 'pw e2e-smtp').map((leak) => leak.secret)).toEqual(['password of PATCH /settings']);
});

describe("a secret's id-like piece inside an id (a trace, envelope or correlation id)", () => {
  // Base64url, like an API token, with one all-hex piece: "3f9a0c".
  const token = 'Vq_3f9a0cXrT-9LmZw';
  const scanOf = (secret: string) => new LeakScan().seed('the token', secret);

  it('is chance, not a leak, when the secret has other characters', () => {
    const line = '{"trace_id":"0d41e7b2c3f9a0c58e21d4b6a7f90e3c","msg":"request done"}';
    expect(scanOf(token).scan('log', line)).toEqual([]);
  });

  it('is a leak when it stands apart from any id, and the whole token always is', () => {
    expect(scanOf(token).scan('log', 'key part 3f9a0c here')).toHaveLength(1);
    expect(scanOf(token).scan('log', `{"trace_id":"0d41e7b2c3f9a0c58e","key":"${token}"}`)).toHaveLength(1);
  });

  it("is chance, not a leak, when the piece holds a dash and sits in a UUID (a request's correlation id)", () => {
    // Its piece "a0c-9b" is in the UUID's dashed groups; the whole token would show "Vq_" and "XrT".
    const dashed = 'Vq_3f9a0c-9bXrT-LmZw';
    const line = '{"msg":"request done","correlation_id":"ab606221-4a0c-9b1e-91c7-8d2f0a7e5c3b"}';
    expect(scanOf(dashed).scan('log', line)).toEqual([]);
    expect(scanOf(dashed).scan('log', 'cut a0c-9b here')).toHaveLength(1);
  });

  it('is a leak when the secret itself is hex', () => {
    const hexSecret = 'c3f9a0c58e21d4b6';
    expect(scanOf(hexSecret).scan('log', '{"trace_id":"0d41e7b2c3f9a0c58e21d4b6a7f90e3c"}')).toHaveLength(1);
  });
});

describe("a secret's piece inside a random token the platform issued", () => {
  const secret = 'Rk4wPz9QmT2xLc7VbN1s';
  const scanOf = () => new LeakScan().seed('the password', secret);
  // A 43-character API token that holds "pz9qmt" (the secret's, in another case) by chance.
  const token = 'pack_h3Jd-Uq8yPZ9QMTe_0aLw5KvXr2GtNbSc4iFoYm';

  it('is chance, not a leak, when token characters surround it and neither continues the secret', () => {
    expect(scanOf().scan('response', `{"id":2,"token":"${token}"}`)).toEqual([]);
  });

  it('is a leak when the token continues it with the next or the previous character of the secret', () => {
    expect(scanOf().scan('response', `{"token":"pack_h3Jd-Uq8yPZ9QMT2e_0aLw5Kv"}`)).toHaveLength(1);
    expect(scanOf().scan('response', `{"token":"pack_h3Jd-Uq8wPZ9QMTe_0aLw5Kv"}`)).toHaveLength(1);
  });

  it('is a leak at the edge of a token, and the whole secret inside one always is', () => {
    expect(scanOf().scan('response', `{"token":"pack_h3Jd-Uq8yPZ9QMT"}`)).toHaveLength(1);
    expect(scanOf().scan('response', `{"key":"sk_${secret}_live"}`)).toHaveLength(1);
  });
});
