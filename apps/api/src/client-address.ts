import { isIP } from 'node:net';

/** The eight 16-bit groups of an IPv6 address (`::` expanded, a dotted IPv4 tail read as two groups). */
function ipv6Groups(address: string): number[] {
  let text = address;
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const read = (part: string) => (part === '' ? [] : part.split(':').map((group) => parseInt(group, 16)));
  const before = read(head);
  const after = tail === undefined ? [] : read(tail);
  return [...before, ...Array<number>(8 - before.length - after.length).fill(0), ...after];
}

/**
 * The client a per-address limit counts: an IPv4 address as it is, an IPv6 address by its /64. One
 * IPv6 subscriber is handed a whole /64 (RFC 6177), so counting single addresses would let a client
 * reset its count by picking a new interface id for every request. An IPv4 address seen through an
 * IPv6 socket (`::ffff:192.0.2.9`) is that IPv4 address. Anything else (no address) is kept as is.
 */
export function limitedAddress(address: string): string {
  const plain = address.split('%')[0] ?? address;
  if (isIP(plain) === 4) return plain;
  if (isIP(plain) !== 6) return address;
  const groups = ipv6Groups(plain);
  const [g6 = 0, g7 = 0] = groups.slice(6);
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff)
    return [g6 >> 8, g6 & 0xff, g7 >> 8, g7 & 0xff].join('.');
  return `${groups
    .slice(0, 4)
    .map((g) => g.toString(16))
    .join(':')}::/64`;
}
