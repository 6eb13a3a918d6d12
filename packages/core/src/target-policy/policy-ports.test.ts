import { createTargetPolicy, type TargetDecision, type TargetPolicy } from './policy';
import { parseTargetRules } from './rules';

// Pure decision tests of what a policy protects besides address ranges: the deployment's own
// endpoints and service ports, unsafe ports, and the words of a refusal. Nothing here opens a socket
// or resolves a name.

const closed = createTargetPolicy();

function ruleOf(decision: TargetDecision): string {
  return decision.allowed ? 'allowed' : decision.rule;
}

function urlRule(policy: TargetPolicy, url: string): string {
  return ruleOf(policy.checkUrl(url));
}

describe('protected endpoints', () => {
  const policy = createTargetPolicy({
    allow: parseTargetRules('127.0.0.0/8, 10.0.0.0/8, db.internal'),
    protectedEndpoints: [
      { host: '127.0.0.1', port: 5432 },
      { host: '127.0.0.1', port: 6379 },
      { host: 'db.internal', port: 5432 },
      { host: '10.0.0.5', port: 3000 },
    ],
  });

  it('stay refused though their range is allowed', () => {
    expect(urlRule(policy, 'http://127.0.0.1:5432/')).toBe('protected_endpoint');
    expect(urlRule(policy, 'http://2130706433:6379/')).toBe('protected_endpoint');
    expect(urlRule(policy, 'http://[::ffff:127.0.0.1]:6379/')).toBe('protected_endpoint');
    expect(urlRule(policy, 'http://db.internal:5432/')).toBe('protected_endpoint');
    expect(ruleOf(policy.checkAddress('10.0.0.5', 3000, 'api.internal'))).toBe('protected_endpoint');
  });

  it('are host and port: other ports of the same host follow the allow rules', () => {
    expect(urlRule(policy, 'http://127.0.0.1:5433/')).toBe('allowed');
    expect(urlRule(policy, 'http://10.0.0.5/')).toBe('allowed');
  });

  it('refuse a bad endpoint at creation', () => {
    expect(() => createTargetPolicy({ protectedEndpoints: [{ host: 'bad host', port: 5432 }] })).toThrow(/bad host/);
    expect(() => createTargetPolicy({ protectedEndpoints: [{ host: 'db', port: 0 }] })).toThrow(/port/);
  });
});

describe("the deployment's service ports on every address of the machine and of its hosts", () => {
  // TARGET_ALLOW=127.0.0.0/8 as docs/NETWORK_POLICY.md suggests, plus the ranges the other
  // forms live in, so only the protection can refuse them.
  const policy = createTargetPolicy({
    allow: parseTargetRules('127.0.0.0/8, 0.0.0.0/8, ::/128, 192.0.2.0/24, 10.0.0.0/8, ::1/128'),
    protectedPorts: [5432, 6379, 3000, 9090, 9464],
    protectedHosts: ['db.internal', '10.0.0.5'],
    machineAddresses: ['192.0.2.2', 'fd00::2'],
  });

  it.each([
    ['another loopback address', 'http://127.0.0.2:3000/healthz'],
    ['the top of the loopback range', 'http://127.255.255.254:5432/'],
    ['an IPv4-mapped loopback address', 'http://[::ffff:127.0.0.3]:3000/readyz'],
    ['an IPv4-mapped loopback address in hex', 'http://[::ffff:7f00:3]:6379/'],
    ['IPv6 loopback', 'http://[::1]:9090/metrics'],
    ['the unspecified address', 'http://0.0.0.0:5432/'],
    ['the unspecified address, short', 'http://0:6379/'],
    ['the IPv6 unspecified address', 'http://[::]:9464/metrics'],
    ['localhost', 'http://localhost:9464/metrics'],
    ['a name under localhost', 'http://api.localhost:3000/'],
    ['an interface address', 'http://192.0.2.2:9464/metrics'],
    ['an IPv6 interface address', 'http://[fd00::2]:6379/'],
    ['an interface address, IPv4-mapped', 'http://[::ffff:192.0.2.2]:5432/'],
    ["the database's host by name", 'http://db.internal:6379/'],
    ["the database's host by address", 'http://10.0.0.5:9090/'],
  ])('%s (%s) is refused as protected_endpoint', (_what, url) => {
    const decision = policy.checkUrl(url);
    expect(ruleOf(decision)).toBe('protected_endpoint');
    expect(decision.allowed ? '' : decision.detail).toContain("one of this deployment's own services");
  });

  it('refuses a name that resolves to such an address, on each address the worker judges', () => {
    expect(ruleOf(policy.checkAddress('127.0.0.2', 5432, 'inside.test'))).toBe('protected_endpoint');
    expect(ruleOf(policy.checkAddress('::ffff:127.0.0.3', 6379, 'inside.test'))).toBe('protected_endpoint');
    expect(ruleOf(policy.checkAddress('192.0.2.2', 9464, 'pod.test'))).toBe('protected_endpoint');
    expect(ruleOf(policy.checkAddress('10.0.0.5', 3000, 'db-alias.test'))).toBe('protected_endpoint');
  });

  it('leaves other ports of those addresses, and the ports on other hosts, to the allow rules', () => {
    expect(urlRule(policy, 'http://127.0.0.2:8080/')).toBe('allowed');
    expect(urlRule(policy, 'http://192.0.2.2:8080/')).toBe('allowed');
    expect(urlRule(policy, 'http://192.0.2.3:5432/')).toBe('allowed');
    expect(urlRule(policy, 'http://10.0.0.6:5432/')).toBe('allowed');
    expect(ruleOf(policy.checkAddress('10.0.0.6', 6379, 'elsewhere.test'))).toBe('allowed');
  });

  it('refuses a bad port or host at creation', () => {
    expect(() => createTargetPolicy({ protectedPorts: [0] })).toThrow(/port/);
    expect(() => createTargetPolicy({ protectedHosts: ['bad host'] })).toThrow(/bad host/);
  });
});

describe('unsafe ports', () => {
  it.each([0, 1, 22, 25, 110, 143, 587, 4190, 6000, 6667, 6679, 10080])('port %i is refused', (port) => {
    expect(urlRule(closed, `http://example.com:${port}/`)).toBe('unsafe_port');
    expect(ruleOf(closed.checkAddress('93.184.215.14', port, 'example.com'))).toBe('unsafe_port');
  });

  it('even where the host is allowed', () => {
    const open = createTargetPolicy({ allow: parseTargetRules('127.0.0.1') });
    expect(urlRule(open, 'http://127.0.0.1:25/')).toBe('unsafe_port');
  });

  it('ordinary ports pass', () => {
    for (const port of [80, 443, 3000, 8080, 8443, 65535]) {
      expect(urlRule(closed, `http://example.com:${port}/`)).toBe('allowed');
    }
  });
});

describe('refusals explain themselves without touching the target', () => {
  it('name the host and the rule', () => {
    const decision = closed.checkUrl('http://0xA9FEA9FE/');
    expect(decision).toEqual({
      allowed: false,
      rule: 'metadata',
      host: '169.254.169.254',
      detail: '169.254.169.254 is a cloud metadata endpoint (rule: metadata)',
    });
    const denied = createTargetPolicy({ deny: parseTargetRules('*.example.org') }).checkUrl('https://a.example.org/');
    expect(denied.allowed ? '' : denied.detail).toBe(
      'a.example.org matches the denied target "*.example.org" (rule: deny_list)',
    );
    const scheme = closed.checkUrl('file:///etc/passwd');
    expect(scheme.allowed ? '' : scheme.detail).toBe('file: URLs are not allowed as targets (rule: scheme)');
  });

  it('never carry the URL path or query', () => {
    const decision = closed.checkUrl('http://10.0.0.1/secret?token=abc');
    expect(JSON.stringify(decision)).not.toMatch(/secret|token|abc/);
  });

  it('an address the resolver could not have produced is refused', () => {
    expect(ruleOf(closed.checkAddress('not-an-ip', 80, 'x.test'))).toBe('invalid_address');
    expect(ruleOf(closed.checkAddress('0x7f000001', 80))).toBe('invalid_address');
  });
});
