import ipaddr from 'ipaddr.js';

/** An IPv4 or IPv6 address as ipaddr.js represents it. */
export type IpAddress = ipaddr.IPv4 | ipaddr.IPv6;

/** A CIDR range: network address and prefix length. */
export type IpRange = [IpAddress, number];

/** The ranges the default policy denies, by the rule name a refusal carries. */
export type AddressCategory = 'unspecified' | 'loopback' | 'private' | 'link_local' | 'reserved';

function cidr(text: string): IpRange {
  return ipaddr.parseCIDR(text);
}

/**
 * Every range that is not the public internet. Checked in order, so the narrower, better-known name
 * wins (`::1` is loopback before `::/96` is reserved).
 */
const DENIED_RANGES: readonly { category: AddressCategory; range: IpRange }[] = [
  // IPv4
  { category: 'unspecified', range: cidr('0.0.0.0/8') },
  { category: 'loopback', range: cidr('127.0.0.0/8') },
  { category: 'private', range: cidr('10.0.0.0/8') },
  { category: 'private', range: cidr('172.16.0.0/12') },
  { category: 'private', range: cidr('192.168.0.0/16') },
  // Shared address space (RFC 6598): carrier-grade NAT, and pod networks of some clusters.
  { category: 'private', range: cidr('100.64.0.0/10') },
  { category: 'link_local', range: cidr('169.254.0.0/16') },
  { category: 'reserved', range: cidr('192.0.0.0/24') },
  { category: 'reserved', range: cidr('192.0.2.0/24') },
  { category: 'reserved', range: cidr('198.18.0.0/15') },
  { category: 'reserved', range: cidr('198.51.100.0/24') },
  { category: 'reserved', range: cidr('203.0.113.0/24') },
  { category: 'reserved', range: cidr('224.0.0.0/4') },
  { category: 'reserved', range: cidr('240.0.0.0/4') },
  // IPv6
  { category: 'unspecified', range: cidr('::/128') },
  { category: 'loopback', range: cidr('::1/128') },
  { category: 'private', range: cidr('fc00::/7') },
  { category: 'private', range: cidr('fec0::/10') },
  // Local-use NAT64 (RFC 8215): where it leads is the deployment's own choice.
  { category: 'private', range: cidr('64:ff9b:1::/48') },
  { category: 'link_local', range: cidr('fe80::/10') },
  { category: 'reserved', range: cidr('::/96') },
  { category: 'reserved', range: cidr('100::/64') },
  { category: 'reserved', range: cidr('2001::/32') },
  { category: 'reserved', range: cidr('2001:2::/48') },
  { category: 'reserved', range: cidr('2001:10::/28') },
  { category: 'reserved', range: cidr('2001:db8::/32') },
  { category: 'reserved', range: cidr('ff00::/8') },
];

/**
 * Cloud metadata and platform endpoints. Always denied: no deployment tests its own cloud's
 * metadata service, and an operator's allow rule for a wider range must not open it by accident.
 */
const METADATA_ADDRESSES: readonly IpAddress[] = [
  '169.254.169.254', // AWS, GCP, Azure, OpenStack, DigitalOcean, Oracle instance metadata
  '169.254.170.2', // AWS ECS task metadata and credentials
  '100.100.100.200', // Alibaba Cloud instance metadata
  '168.63.129.16', // Azure platform endpoint (WireServer)
  'fd00:ec2::254', // AWS instance metadata over IPv6
].map((text) => ipaddr.parse(text));

/** Host names that lead to a metadata service whatever they resolve to. */
export const METADATA_HOST_NAMES: ReadonlySet<string> = new Set([
  'metadata',
  'metadata.google.internal',
  'metadata.goog',
]);

/** Ranges whose IPv6 addresses carry an IPv4 address in their low 32 bits. */
const LOW_32_EMBEDDING: readonly IpRange[] = [
  cidr('::ffff:0:0/96'), // IPv4-mapped
  cidr('::ffff:0:0:0/96'), // IPv4-translated (RFC 6145)
  cidr('64:ff9b::/96'), // NAT64 well-known prefix (RFC 6052)
  cidr('::/96'), // IPv4-compatible (deprecated, still parsed)
];
const SIX_TO_FOUR = cidr('2002::/16');
const LOOPBACK_AND_UNSPECIFIED_V6 = cidr('::/127');

/** Parses an address as the resolver or a canonical URL spells it, or `undefined` when it is not one. */
export function parseAddress(text: string): IpAddress | undefined {
  const bare = text.startsWith('[') && text.endsWith(']') ? text.slice(1, -1) : text;
  if (ipaddr.IPv4.isValidFourPartDecimal(bare)) return ipaddr.IPv4.parse(bare);
  if (ipaddr.IPv6.isValid(bare)) return ipaddr.IPv6.parse(bare);
  return undefined;
}

function inRange(address: IpAddress, range: IpRange): boolean {
  return address.kind() === range[0].kind() && address.match(range);
}

/**
 * The IPv4 address an IPv6 address stands for, when it embeds one (IPv4-mapped `::ffff:a.b.c.d`,
 * IPv4-translated, NAT64 `64:ff9b::/96`, IPv4-compatible and 6to4). A connection to such an
 * address can end up at the embedded IPv4 host, so the policy judges that one.
 */
function embeddedIpv4(address: IpAddress): ipaddr.IPv4 | undefined {
  if (address.kind() !== 'ipv6') return undefined;
  const bytes = address.toByteArray();
  // `::` and `::1` fall inside `::/96` but are themselves, not IPv4 0.0.0.0 and 0.0.0.1.
  if (inRange(address, LOOPBACK_AND_UNSPECIFIED_V6)) return undefined;
  if (LOW_32_EMBEDDING.some((range) => inRange(address, range))) {
    return ipaddr.IPv4.parse(bytes.slice(12, 16).join('.'));
  }
  if (inRange(address, SIX_TO_FOUR)) return ipaddr.IPv4.parse(bytes.slice(2, 6).join('.'));
  return undefined;
}

/** The addresses a connection to `address` may reach: itself, and the IPv4 address it embeds, if any. */
export function effectiveAddresses(address: IpAddress): IpAddress[] {
  const embedded = embeddedIpv4(address);
  return embedded ? [address, embedded] : [address];
}

/** The default-denied category of one address (not unwrapped), or `undefined` for a public address. */
export function categoryOf(address: IpAddress): AddressCategory | undefined {
  return DENIED_RANGES.find((entry) => inRange(address, entry.range))?.category;
}

/** True for a cloud metadata or platform endpoint (see the list above). */
export function isMetadataAddress(address: IpAddress): boolean {
  return METADATA_ADDRESSES.some((known) => sameAddress(known, address));
}

/** Whether `address` lies in `range` (false when one is IPv4 and the other IPv6). */
export function addressInRange(address: IpAddress, range: IpRange): boolean {
  return inRange(address, range);
}

/** Whether two addresses are the same. */
export function sameAddress(a: IpAddress, b: IpAddress): boolean {
  return a.kind() === b.kind() && a.toNormalizedString() === b.toNormalizedString();
}

/**
 * The default-denied categories a CIDR range shares addresses with: `10.20.0.0/16` is `private`,
 * `0.0.0.0/0` every IPv4 one. Ranges of the other family share none.
 */
export function categoriesOverlapping(range: IpRange): AddressCategory[] {
  const [network, bits] = range;
  const found = new Set<AddressCategory>();
  for (const entry of DENIED_RANGES) {
    // Two ranges overlap when their networks agree on the shorter prefix.
    if (inRange(entry.range[0], [network, Math.min(bits, entry.range[1])])) found.add(entry.category);
  }
  return [...found];
}
