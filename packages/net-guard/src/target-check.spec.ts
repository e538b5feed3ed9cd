import { parseAllowedCidrs } from './address';
import { targetUrlCheck } from './target-check';

describe('targetUrlCheck: the check when a URL is saved', () => {
  const names: Record<string, string[]> = {
    'metadata.internal.test': ['169.254.169.254'],
    'public.test': ['93.184.215.14'],
    'loop.test': ['127.0.0.1'],
  };
  const resolve = async (host: string) => {
    const found = names[host];
    if (!found) throw new Error('ENOTFOUND');
    return found;
  };

  it('refuses a host name resolving to a refused address, naming the rule', async () => {
    const check = targetUrlCheck([], resolve);
    expect(await check('http://metadata.internal.test/latest/')).toBe(
      'host resolves to 169.254.169.254 is a cloud metadata address (PACK_ALLOWED_TARGET_CIDRS)',
    );
    expect(await check('https://public.test/v1')).toBeNull();
    // Not resolvable now: checked again at connect time.
    expect(await check('https://later.test/v1')).toBeNull();
  });

  it('allows what PACK_ALLOWED_TARGET_CIDRS names', async () => {
    expect(await targetUrlCheck([], resolve)('http://loop.test/')).toMatch(/loopback/);
    expect(await targetUrlCheck(parseAllowedCidrs('127.0.0.0/8'), resolve)('http://loop.test/')).toBeNull();
  });
});
