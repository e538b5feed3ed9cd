import { checkAddress, isAllowedAddress, parseAllowedCidrs, PRIVATE_NETWORK_KINDS } from './address';

describe('checkAddress', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback'],
    ['::1', 'loopback'],
    ['10.0.0.1', 'private'],
    ['10.255.255.255', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.254', 'private'],
    ['192.168.1.1', 'private'],
    ['169.254.10.20', 'link-local'],
    ['100.64.0.1', 'carrier-grade NAT'],
    ['100.127.255.254', 'carrier-grade NAT'],
    ['fc00::1', 'unique-local'],
    ['fdff:ffff::1', 'unique-local'],
    ['fe80::1', 'link-local'],
    ['febf::1', 'link-local'],
    ['fe80::1%eth0', 'link-local'],
    ['224.0.0.1', 'multicast'],
    ['ff02::1', 'multicast'],
    ['0.0.0.0', 'unspecified'],
    ['::', 'unspecified'],
    ['::ffff:127.0.0.1', 'IPv6 form of a loopback'],
    ['::ffff:7f00:1', 'IPv6 form of a loopback'],
    ['::ffff:10.0.0.1', 'IPv6 form of a private'],
    ['64:ff9b::a9fe:a9fe', 'IPv6 form of a cloud metadata'],
    ['2002:7f00:1::', 'IPv6 form of a loopback'],
    ['::7f00:1', 'IPv4-compatible'],
    ['::808:808', 'IPv4-compatible'],
    ['169.254.169.254', 'cloud metadata'],
    ['fd00:ec2::254', 'cloud metadata'],
    ['255.255.255.255', 'broadcast'],
    ['240.0.0.1', 'reserved'],
  ])('refuses %s as %s', (ip, kind) => {
    const verdict = checkAddress(ip);
    expect(verdict.refused).toBe(true);
    expect(verdict.refused && verdict.reason).toContain(ip);
    expect(verdict.refused && verdict.reason).toContain(kind);
  });

  it.each(['8.8.8.8', '1.1.1.1', '172.32.0.1', '172.15.255.255', '100.128.0.1', '2606:4700:4700::1111'])(
    'allows the public address %s (classification only, nothing connects)',
    (ip) => {
      expect(checkAddress(ip)).toEqual({ refused: false });
      expect(isAllowedAddress(ip)).toBe(true);
    },
  );

  it('refuses what is not an IP address', () => {
    expect(checkAddress('localhost')).toEqual({ refused: true, reason: 'not an IP address' });
    expect(checkAddress('')).toEqual({ refused: true, reason: 'not an IP address' });
  });
});

describe('allowed CIDRs', () => {
  it('open exactly their range', () => {
    const allowed = parseAllowedCidrs('127.0.0.0/8, 10.1.2.0/24,::1/128');
    expect(isAllowedAddress('127.0.0.1', allowed)).toBe(true);
    expect(isAllowedAddress('127.200.1.1', allowed)).toBe(true);
    expect(isAllowedAddress('::ffff:127.0.0.1', allowed)).toBe(true);
    expect(isAllowedAddress('::1', allowed)).toBe(true);
    expect(isAllowedAddress('10.1.2.0', allowed)).toBe(true);
    expect(isAllowedAddress('10.1.2.255', allowed)).toBe(true);
    expect(isAllowedAddress('10.1.3.0', allowed)).toBe(false);
    expect(isAllowedAddress('10.1.1.255', allowed)).toBe(false);
    expect(isAllowedAddress('192.168.0.1', allowed)).toBe(false);
    expect(isAllowedAddress('169.254.169.254', allowed)).toBe(false);
    expect(isAllowedAddress('fe80::1', allowed)).toBe(false);
  });

  it('a single-address range opens that address only, the metadata one included when named', () => {
    const allowed = parseAllowedCidrs('169.254.169.254/32');
    expect(isAllowedAddress('169.254.169.254', allowed)).toBe(true);
    expect(isAllowedAddress('169.254.169.253', allowed)).toBe(false);
  });

  it('are empty by default', () => {
    expect(parseAllowedCidrs(undefined)).toEqual([]);
    expect(parseAllowedCidrs('')).toEqual([]);
    expect(parseAllowedCidrs(' , ')).toEqual([]);
  });

  it.each(['10.0.0.0/33', '10.0.0.0', '127.1/8', 'localhost/8', '::1/129', '10.0.0.0/8/8'])(
    'refuses the entry %s, naming it',
    (entry) => {
      expect(() => parseAllowedCidrs(`127.0.0.0/8,${entry}`)).toThrow(`"${entry}" is not a CIDR range`);
    },
  );
});

describe('allowed kinds (private networks)', () => {
  it.each([
    '127.0.0.1',
    '::1',
    '10.0.0.5',
    '172.16.0.1',
    '192.168.1.1',
    '100.64.0.1',
    'fd12::1',
    '::ffff:10.0.0.1',
  ])('open %s', (ip) => expect(checkAddress(ip, [], PRIVATE_NETWORK_KINDS)).toEqual({ refused: false }));

  it.each([
    ['169.254.169.254', 'cloud metadata'],
    ['fd00:ec2::254', 'cloud metadata'],
    ['100.100.100.200', 'cloud metadata'],
    ['::ffff:169.254.169.254', 'cloud metadata'],
    ['169.254.10.20', 'link-local'],
    ['fe80::1', 'link-local'],
    ['0.0.0.0', 'unspecified'],
    ['224.0.0.1', 'multicast'],
  ])('keep refusing %s (%s), even where a private range holds it', (ip, kind) => {
    const verdict = checkAddress(ip, [], PRIVATE_NETWORK_KINDS);
    expect(verdict.refused && verdict.reason).toContain(kind);
  });

  it('a range names a metadata address explicitly', () => {
    expect(
      checkAddress('169.254.169.254', parseAllowedCidrs('169.254.169.254/32'), PRIVATE_NETWORK_KINDS),
    ).toEqual({
      refused: false,
    });
  });
});
