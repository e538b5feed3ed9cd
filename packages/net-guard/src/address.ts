import ipaddr from 'ipaddr.js';

type Address = ipaddr.IPv4 | ipaddr.IPv6;

/** One range of PACK_ALLOWED_TARGET_CIDRS, kept with its text for messages. */
export interface AllowedCidr {
  readonly cidr: string;
  readonly range: [Address, number];
}
export type AllowedCidrs = readonly AllowedCidr[];

export type AddressVerdict = { refused: false } | { refused: true; reason: string };

/**
 * Named metadata endpoints: they already fall in refused ranges, but the reason should say what
 * they are, because "link-local" does not tell an operator why their URL was refused.
 */
const METADATA = new Set(['169.254.169.254', 'fd00:ec2::254', '100.100.100.200']);

const IPV4_REASONS: Record<ReturnType<ipaddr.IPv4['range']>, string | null> = {
  unicast: null,
  unspecified: 'an unspecified address',
  broadcast: 'a broadcast address',
  multicast: 'a multicast address',
  linkLocal: 'a link-local address',
  loopback: 'a loopback address',
  carrierGradeNat: 'a carrier-grade NAT (shared) address',
  private: 'a private address',
  reserved: 'a reserved address',
  benchmarking: 'a reserved address',
  as112: 'a special-purpose address',
  amt: 'a special-purpose address',
};

const IPV6_REASONS: Partial<Record<string, string>> = {
  unspecified: 'an unspecified address',
  multicast: 'a multicast address',
  linkLocal: 'a link-local address',
  loopback: 'a loopback address',
  uniqueLocal: 'a unique-local address',
  deprecatedSiteLocal: 'a site-local address',
  teredo: 'a Teredo tunnel address',
};

/**
 * The IPv4 address an IPv6 address carries and would reach: mapped (::ffff:a.b.c.d), translated
 * (::ffff:0:a.b.c.d), NAT64 (64:ff9b::a.b.c.d) and 6to4 (2002:aabb:ccdd::). Classifying that
 * address closes the trick of writing 127.0.0.1 in an IPv6 form.
 */
function embeddedIpv4(address: ipaddr.IPv6): ipaddr.IPv4 | null {
  const parts = address.parts;
  const fromWords = (high: number, low: number) =>
    new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff]);
  const range = address.range();
  if (range === 'ipv4Mapped' || range === 'rfc6145') return fromWords(parts[6] ?? 0, parts[7] ?? 0);
  if (range === 'rfc6052' && parts[2] === 0) return fromWords(parts[6] ?? 0, parts[7] ?? 0);
  if (range === '6to4') return fromWords(parts[1] ?? 0, parts[2] ?? 0);
  return null;
}

function parse(ip: string): Address | null {
  // A zone id (fe80::1%eth0) names an interface, not a different address.
  const bare = ip.replace(/%.*$/, '');
  return ipaddr.isValid(bare) ? ipaddr.parse(bare) : null;
}

function classify(address: Address): AddressVerdict {
  if (METADATA.has(address.toNormalizedString()) || METADATA.has(address.toString())) {
    return { refused: true, reason: 'a cloud metadata address' };
  }
  if (address.kind() === 'ipv4') {
    const reason = IPV4_REASONS[(address as ipaddr.IPv4).range()];
    return reason ? { refused: true, reason } : { refused: false };
  }
  const v6 = address as ipaddr.IPv6;
  const embedded = embeddedIpv4(v6);
  if (embedded) {
    const inner = classify(embedded);
    return inner.refused ? { refused: true, reason: `an IPv6 form of ${inner.reason}` } : inner;
  }
  const range = v6.range();
  // ::a.b.c.d (deprecated IPv4-compatible): some stacks still route it to the IPv4 address.
  if (range === 'unicast' && v6.parts.slice(0, 6).every((part) => part === 0)) {
    return { refused: true, reason: 'an IPv4-compatible IPv6 address' };
  }
  if (range === 'unicast') return { refused: false };
  if (range === 'rfc6052') return { refused: true, reason: 'a local-use NAT64 address' };
  return { refused: true, reason: IPV6_REASONS[range] ?? 'a reserved or special-purpose address' };
}

function inAllowed(address: Address, allowed: AllowedCidrs): boolean {
  const v4 = address.kind() === 'ipv6' ? embeddedIpv4(address as ipaddr.IPv6) : null;
  const candidates = v4 ? [address, v4] : [address];
  return allowed.some(({ range }) =>
    candidates.some((candidate) => candidate.kind() === range[0].kind() && candidate.match(range)),
  );
}

/**
 * Whether an outbound connection may go to this address: public unicast addresses may; loopback,
 * private, link-local, unique-local, CGNAT, multicast, unspecified, reserved and metadata
 * addresses (and IPv6 forms of them) may not, unless an allowed range covers the address.
 */
export function checkAddress(ip: string, allowed: AllowedCidrs = []): AddressVerdict {
  const address = parse(ip);
  if (!address) return { refused: true, reason: 'not an IP address' };
  if (inAllowed(address, allowed)) return { refused: false };
  const verdict = classify(address);
  return verdict.refused ? { refused: true, reason: `${ip} is ${verdict.reason}` } : verdict;
}

export function isAllowedAddress(ip: string, allowed: AllowedCidrs = []): boolean {
  return !checkAddress(ip, allowed).refused;
}

function isCidr(text: string): boolean {
  return ipaddr.IPv4.isValidCIDRFourPartDecimal(text) || ipaddr.IPv6.isValidCIDR(text);
}

/**
 * Parses PACK_ALLOWED_TARGET_CIDRS (comma-separated, empty for none). Throws naming the first
 * entry that is not a CIDR, so configuration can stop the service with that message.
 */
export function parseAllowedCidrs(value: string | undefined): AllowedCidrs {
  const entries = (value ?? '')
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
  return entries.map((cidr) => {
    if (!isCidr(cidr)) {
      throw new Error(
        `"${cidr}" is not a CIDR range (write an address and prefix length, such as 10.0.0.0/8, 127.0.0.1/32 or ::1/128)`,
      );
    }
    return { cidr, range: ipaddr.parseCIDR(cidr) };
  });
}
