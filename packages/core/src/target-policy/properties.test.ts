import fc from 'fast-check';
import { createTargetPolicy, type TargetDecision } from './policy';
import { parseTargetRules } from './rules';
import { isUnsafePort } from './unsafe-ports';

// Properties over generated addresses: every address of a denied range is denied whatever way a URL
// spells it, and allow rules open exactly the ranges they name. Pure: nothing is dialled.

const closed = createTargetPolicy();

type Octets = [number, number, number, number];
const octet = fc.integer({ min: 0, max: 255 });

/** Addresses whose leading octets are `prefix`, the rest random. */
function inside(prefix: readonly number[]): fc.Arbitrary<Octets> {
  return fc
    .tuple(octet, octet, octet, octet)
    .map(([a, b, c, d]): Octets => [prefix[0] ?? a, prefix[1] ?? b, prefix[2] ?? c, prefix[3] ?? d]);
}

const toNumber = (o: Octets) => ((o[0] * 256 + o[1]) * 256 + o[2]) * 256 + o[3];
const hex = (n: number) => `0x${n.toString(16)}`;
const oct = (n: number) => `0${n.toString(8)}`;

/** Spellings the WHATWG URL parser turns into the same IPv4 address. */
function spellings(o: Octets): string[] {
  const h = (n: number) => n.toString(16).padStart(2, '0');
  return [
    o.join('.'),
    String(toNumber(o)),
    hex(toNumber(o)),
    o.map(oct).join('.'),
    o.map(hex).join('.'),
    [hex(o[0]), oct(o[1]), String(o[2]), hex(o[3])].join('.'),
    `${o[0]}.${o[1]}.${o[2] * 256 + o[3]}`,
    `${o[0]}.${(o[1] * 256 + o[2]) * 256 + o[3]}`,
    `[::ffff:${o.join('.')}]`,
    `[::ffff:${h(o[0])}${h(o[1])}:${h(o[2])}${h(o[3])}]`,
    `[0:0:0:0:0:ffff:${o.join('.')}]`,
  ];
}

const deniedRanges: [string, fc.Arbitrary<Octets>][] = [
  ['loopback', inside([127])],
  ['private', inside([10])],
  ['private', inside([172]).map((o): Octets => [o[0], 16 + (o[1] % 16), o[2], o[3]])],
  ['private', inside([192, 168])],
  ['link_local', inside([169, 254]).filter((o) => !(o[2] === 169 && o[3] === 254) && !(o[2] === 170 && o[3] === 2))],
  ['unspecified', inside([0])],
];

it.each(deniedRanges)('every address of a %s range is refused in every spelling', (rule, addresses) => {
  fc.assert(
    fc.property(addresses, (o) => {
      for (const spelled of spellings(o)) {
        const decision = closed.checkUrl(`http://${spelled}/`);
        expect(decision.allowed ? 'allowed' : decision.rule).toBe(rule);
      }
    }),
    { numRuns: 300 },
  );
});

it('every spelling of the metadata address is refused as metadata', () => {
  for (const spelled of spellings([169, 254, 169, 254])) {
    const decision = closed.checkUrl(`http://${spelled}/latest/meta-data/`);
    expect(decision.allowed ? 'allowed' : decision.rule).toBe('metadata');
  }
});

it('resolved IPv4-mapped IPv6 answers are judged as the IPv4 address', () => {
  fc.assert(
    fc.property(inside([10]), (o) => {
      const decision = closed.checkAddress(`::ffff:${o.join('.')}`, 443, 'public-looking.example');
      expect(decision.allowed ? 'allowed' : decision.rule).toBe('private');
    }),
    { numRuns: 200 },
  );
});

it('an allowed /24 opens exactly its addresses, and a deny inside it wins', () => {
  const policy = createTargetPolicy({
    allow: parseTargetRules('10.20.30.0/24'),
    deny: parseTargetRules('10.20.30.128/25'),
  });
  fc.assert(
    fc.property(octet, octet, (third, last) => {
      const decision = policy.checkUrl(`http://10.20.${third}.${last}:8080/`);
      const expected = third !== 30 ? 'private' : last >= 128 ? 'deny_list' : 'allowed';
      expect(decision.allowed ? 'allowed' : decision.rule).toBe(expected);
    }),
    { numRuns: 500 },
  );
});

it('every fc00::/7 address is private', () => {
  fc.assert(
    fc.property(fc.array(fc.integer({ min: 0, max: 0xffff }), { minLength: 8, maxLength: 8 }), (parts) => {
      const groups = [0xfc00 | ((parts[0] ?? 0) & 0x1ff), ...parts.slice(1)];
      const address = groups.map((g) => g.toString(16)).join(':');
      if (address === 'fd00:ec2:0:0:0:0:0:254') return;
      const decision = closed.checkUrl(`http://[${address}]/`);
      expect(decision.allowed ? 'allowed' : decision.rule).toBe('private');
    }),
    { numRuns: 300 },
  );
});

describe('a port range opens exactly its ports', () => {
  const port = fc.integer({ min: 1, max: 65_535 });
  const bounds = fc.tuple(port, port).map(([a, b]): [number, number] => [Math.min(a, b), Math.max(a, b)]);
  /** What a policy whose only allow rule is `rule` decides; ports browsers refuse stay refused. */
  const expected = (inRange: boolean, p: number, closedRule: string) =>
    isUnsafePort(p) ? 'unsafe_port' : inRange ? 'allowed' : closedRule;
  const ruleOf = (decision: TargetDecision) => (decision.allowed ? 'allowed' : decision.rule);

  it('on an address, a CIDR range and a host name, in the URL check and the egress check', () => {
    fc.assert(
      fc.property(bounds, port, inside([10, 20]), ([first, last], p, o) => {
        const policy = createTargetPolicy({
          allow: parseTargetRules(
            `127.0.0.1:${first}-${last}, 10.20.0.0/16:${first}-${last}, shop.test:${first}-${last}`,
          ),
        });
        const inRange = p >= first && p <= last;
        expect(ruleOf(policy.checkUrl(`http://127.0.0.1:${p}/`))).toBe(expected(inRange, p, 'loopback'));
        expect(ruleOf(policy.checkAddress('127.0.0.1', p))).toBe(expected(inRange, p, 'loopback'));
        expect(ruleOf(policy.checkUrl(`http://${o.join('.')}:${p}/`))).toBe(expected(inRange, p, 'private'));
        expect(ruleOf(policy.checkAddress('192.168.1.1', p, 'shop.test'))).toBe(expected(inRange, p, 'private'));
        // The other loopback addresses are not in the rule, on any port.
        expect(ruleOf(policy.checkUrl(`http://127.0.0.2:${p}/`))).toBe(expected(false, p, 'loopback'));
      }),
      { numRuns: 500 },
    );
  });

  it('on an IPv6 address written in brackets', () => {
    fc.assert(
      fc.property(bounds, port, ([first, last], p) => {
        const policy = createTargetPolicy({ allow: parseTargetRules(`[::1]:${first}-${last}`) });
        expect(ruleOf(policy.checkUrl(`http://[::1]:${p}/`))).toBe(expected(p >= first && p <= last, p, 'loopback'));
      }),
      { numRuns: 300 },
    );
  });
});
