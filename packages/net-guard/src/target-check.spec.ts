import { parseAllowedCidrs, PRIVATE_NETWORK_KINDS } from './address';
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
    const check = targetUrlCheck({ allowed: [] }, resolve);
    expect(await check('http://metadata.internal.test/latest/')).toBe(
      'host resolves to 169.254.169.254 is a cloud metadata address: to allow it, add its range to PACK_ALLOWED_TARGET_CIDRS',
    );
    expect(await check('https://public.test/v1')).toBeNull();
    // Not resolvable now: checked again at connect time.
    expect(await check('https://later.test/v1')).toBeNull();
  });

  it('allows what PACK_ALLOWED_TARGET_CIDRS names', async () => {
    expect(await targetUrlCheck({ allowed: [] }, resolve)('http://loop.test/')).toMatch(/loopback/);
    expect(
      await targetUrlCheck({ allowed: parseAllowedCidrs('127.0.0.0/8') }, resolve)('http://loop.test/'),
    ).toBeNull();
  });

  it('with private networks allowed by kind, still refuses link-local and metadata, ending with the policy remedy', async () => {
    const check = targetUrlCheck(
      { allowed: [], allowedKinds: PRIVATE_NETWORK_KINDS, remedy: 'set X of the y service' },
      resolve,
    );
    expect(await check('http://loop.test/')).toBeNull();
    expect(await check('http://10.0.0.5:8000/v1')).toBeNull();
    expect(await check('http://metadata.internal.test/')).toBe(
      'host resolves to 169.254.169.254 is a cloud metadata address: set X of the y service',
    );
    expect(await check('http://169.254.10.20/')).toBe(
      'host 169.254.10.20 is a link-local address: set X of the y service',
    );
  });
});
