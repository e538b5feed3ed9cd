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
 * What a refused address is, for policies that allow whole kinds: `metadata` is its own kind,
 * never one of the others, so allowing private networks never opens a metadata endpoint that
 * sits in a private range (fd00:ec2::254, 100.100.100.200).
 */
export type AddressKind =
  'metadata' | 'loopback' | 'private' | 'unique-local' | 'carrier-grade-nat' | 'link-local' | 'other';

/** The kinds a company network uses for its own hosts: loopback, RFC 1918, fc00::/7, CGNAT. */
export const PRIVATE_NETWORK_KINDS: ReadonlySet<AddressKind> = new Set<AddressKind>([
  'loopback',
  'private',
  'unique-local',
  'carrier-grade-nat',
]);

/** Where outbound calls of one purpose may go beyond public addresses, and how to allow more. */
export interface TargetPolicy {
  /** Ranges allowed whatever their kind (metadata included when named). */
  readonly allowed: AllowedCidrs;
  /** Kinds of address allowed without naming a range (none unless given). */
  readonly allowedKinds?: ReadonlySet<AddressKind>;
  /** What to set, and where, to allow a refused address: it ends every refusal's sentence. */
  readonly remedy?: string;
}

/** The refusal's ending when a policy names none. */
export const DEFAULT_REMEDY = 'to allow it, add its range to PACK_ALLOWED_TARGET_CIDRS';

/**
 * Named metadata endpoints: they already fall in refused ranges, but the reason should say what
 * they are, because "link-local" does not tell an operator why their URL was refused.
 */
const METADATA = new Set(['169.254.169.254', 'fd00:ec2::254', '100.100.100.200']);

type Refusal = { reason: string; kind: AddressKind };

const IPV4_REASONS: Record<ReturnType<ipaddr.IPv4['range']>, Refusal | null> = {
  unicast: null,
  unspecified: { reason: 'an unspecified address', kind: 'other' },
  broadcast: { reason: 'a broadcast address', kind: 'other' },
  multicast: { reason: 'a multicast address', kind: 'other' },
  linkLocal: { reason: 'a link-local address', kind: 'link-local' },
  loopback: { reason: 'a loopback address', kind: 'loopback' },
  carrierGradeNat: { reason: 'a carrier-grade NAT (shared) address', kind: 'carrier-grade-nat' },
  private: { reason: 'a private address', kind: 'private' },
  reserved: { reason: 'a reserved address', kind: 'other' },
  benchmarking: { reason: 'a reserved address', kind: 'other' },
  as112: { reason: 'a special-purpose address', kind: 'other' },
  amt: { reason: 'a special-purpose address', kind: 'other' },
};

const IPV6_REASONS: Partial<Record<string, Refusal>> = {
  unspecified: { reason: 'an unspecified address', kind: 'other' },
  multicast: { reason: 'a multicast address', kind: 'other' },
  linkLocal: { reason: 'a link-local address', kind: 'link-local' },
  loopback: { reason: 'a loopback address', kind: 'loopback' },
  uniqueLocal: { reason: 'a unique-local address', kind: 'unique-local' },
  deprecatedSiteLocal: { reason: 'a site-local address', kind: 'other' },
  teredo: { reason: 'a Teredo tunnel address', kind: 'other' },
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

/** Why an address is refused by default, and its kind; null for a public unicast address. */
function classify(address: Address): Refusal | null {
  if (METADATA.has(address.toNormalizedString()) || METADATA.has(address.toString())) {
    return { reason: 'a cloud metadata address', kind: 'metadata' };
  }
  if (address.kind() === 'ipv4') return IPV4_REASONS[(address as ipaddr.IPv4).range()];
  const v6 = address as ipaddr.IPv6;
  const embedded = embeddedIpv4(v6);
  if (embedded) {
    const inner = classify(embedded);
    return inner && { reason: `an IPv6 form of ${inner.reason}`, kind: inner.kind };
  }
  const range = v6.range();
  // ::a.b.c.d (deprecated IPv4-compatible): some stacks still route it to the IPv4 address.
  if (range === 'unicast' && v6.parts.slice(0, 6).every((part) => part === 0)) {
    return { reason: 'an IPv4-compatible IPv6 address', kind: 'other' };
  }
  if (range === 'unicast') return null;
  if (range === 'rfc6052') return { reason: 'a local-use NAT64 address', kind: 'other' };
  return IPV6_REASONS[range] ?? { reason: 'a reserved or special-purpose address', kind: 'other' };
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
 * addresses (and IPv6 forms of them) may not, unless an allowed range covers the address or
 * its kind is one the policy allows.
 */
export function checkAddress(
  ip: string,
  allowed: AllowedCidrs = [],
  allowedKinds: ReadonlySet<AddressKind> = new Set(),
): AddressVerdict {
  const address = parse(ip);
  if (!address) return { refused: true, reason: 'not an IP address' };
  if (inAllowed(address, allowed)) return { refused: false };
  const refusal = classify(address);
  if (!refusal || allowedKinds.has(refusal.kind)) return { refused: false };
  return { refused: true, reason: `${ip} is ${refusal.reason}` };
}

/** checkAddress under a policy. */
export function checkAddressFor(ip: string, policy: TargetPolicy): AddressVerdict {
  return checkAddress(ip, policy.allowed, policy.allowedKinds);
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
