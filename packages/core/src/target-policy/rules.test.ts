import { parseTargetRule, parseTargetRules, TargetRuleError, type TargetRule } from './rules';

function shape(rule: TargetRule): string {
  const { ports } = rule;
  const on =
    ports === undefined
      ? ''
      : ports.first === ports.last
        ? ` port ${ports.first}`
        : ` ports ${ports.first}-${ports.last}`;
  switch (rule.kind) {
    case 'range':
      return `range ${rule.range[0].toString()}/${rule.range[1]}${on}`;
    case 'address':
      return `address ${rule.address.toString()}${on}`;
    case 'host':
      return `host ${rule.name}${on}`;
    case 'suffix':
      return `suffix ${rule.suffix}${on}`;
  }
}

it('reads every kind of item, ignoring blanks and spaces', () => {
  const rules = parseTargetRules(
    ' 10.0.0.0/8, fd00::/8 ,127.0.0.1, 127.0.0.1:8080, fd00::1, [fd00::2], [fd00::3]:443, Staging.Example.COM., api.example.com:8443, *.corp.example, *.corp.example:443,,',
  );
  expect(rules.map(shape)).toEqual([
    'range 10.0.0.0/8',
    'range fd00::/8',
    'address 127.0.0.1',
    'address 127.0.0.1 port 8080',
    'address fd00::1',
    'address fd00::2',
    'address fd00::3 port 443',
    'host staging.example.com',
    'host api.example.com port 8443',
    'suffix .corp.example',
    'suffix .corp.example port 443',
  ]);
  expect(rules[0]?.text).toBe('10.0.0.0/8');
});

it('every kind of item takes a port or a range of ports, CIDR ranges too', () => {
  const rules = parseTargetRules(
    '127.0.0.1:3000-3999, [::1]:8080-8081, [fd00::3]:443-443, shop.test:4010-4011, *.corp.example:8000-8099, 10.20.0.0/16:8443, 127.0.0.0/8:3000-3999, fd00::/8:443, fd00::/8:1-65535',
  );
  expect(rules.map(shape)).toEqual([
    'address 127.0.0.1 ports 3000-3999',
    'address ::1 ports 8080-8081',
    'address fd00::3 port 443',
    'host shop.test ports 4010-4011',
    'suffix .corp.example ports 8000-8099',
    'range 10.20.0.0/16 port 8443',
    'range 127.0.0.0/8 ports 3000-3999',
    'range fd00::/8 port 443',
    'range fd00::/8 ports 1-65535',
  ]);
  expect(rules[0]?.text).toBe('127.0.0.1:3000-3999');
});

it('an unset or blank variable is no rules', () => {
  expect(parseTargetRules(undefined)).toEqual([]);
  expect(parseTargetRules('')).toEqual([]);
  expect(parseTargetRules(' , ')).toEqual([]);
});

it('international names become punycode, as URLs carry them', () => {
  expect(shape(parseTargetRule('bücher.example'))).toBe('host xn--bcher-kva.example');
  expect(shape(parseTargetRule('*.bücher.example'))).toBe('suffix .xn--bcher-kva.example');
});

describe('bad items are named in the error, with the variable', () => {
  it.each([
    ['10.0.0.0/33', /"10\.0\.0\.0\/33" has a prefix length outside 0-32/],
    ['fd00::/129', /prefix length outside 0-128/],
    ['10.0.0.0/x', /prefix length/],
    ['10.0.0/8', /is not a CIDR range/],
    ['example.com/8', /is not a CIDR range/],
    ['http://example.com', /is a URL/],
    ['example.com:0', /port outside 1-65535/],
    ['example.com:70000', /port outside 1-65535/],
    ['example.com:http', /port outside 1-65535/],
    ['[fd00::1]:x', /port outside/],
    ['127.0.0.1:3999-3000', /"127\.0\.0\.1:3999-3000" has a port range whose first port is above its last/],
    ['127.0.0.1:0-100', /port outside 1-65535/],
    ['127.0.0.1:1-65536', /port outside 1-65535/],
    ['127.0.0.1:1-2-3', /port outside 1-65535/],
    ['127.0.0.1:-80', /port outside 1-65535/],
    ['127.0.0.1:80-', /port outside 1-65535/],
    ['10.0.0.0/8:', /port outside 1-65535/],
    ['10.0.0.0/8:x', /port outside 1-65535/],
    ['10.0.0.0/33:80', /prefix length outside 0-32/],
    ['[fd00::]/8:80', /is not a CIDR range/],
    ['a.*.example.com', /may only use \* as its first label/],
    ['*', /may only use \*/],
    ['*.10.0.0.1', /not a valid pattern/],
    ['127.1', /not a canonical address/],
    ['0x7f000001', /not a canonical address/],
    ['999.1.1.1', /not a canonical address/],
    ['exa mple.com', /not a valid host name/],
    ['-bad-.example', /not a valid host name/],
  ])('%s', (item, message) => {
    expect(() => parseTargetRules(`127.0.0.1/32, ${item}`, 'TARGET_DENY')).toThrow(message);
    try {
      parseTargetRules(item, 'TARGET_DENY');
    } catch (error) {
      expect(error).toBeInstanceOf(TargetRuleError);
      expect(error instanceof TargetRuleError ? error.message : '').toMatch(/^TARGET_DENY: "/);
    }
  });
});
