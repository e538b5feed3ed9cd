import { LeakScan } from './leak-scan';

const SECRET = 'Kq7/Zp+Wm3xT9vLr2Hc8';

const found = (text: string) => new LeakScan().seed('the key', SECRET).scan('here', text);

describe('LeakScan (issue 20: "matching any 6-character or longer fragment of a secret, in any letter case, URL- or JSON-encoded")', () => {
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
