import { createTargetPolicy, narrowPolicy, type TargetDecision, type TargetPolicy } from './policy';
import { parseTargetRules } from './rules';

// Pure decision tests: nothing here opens a socket or resolves a name.

const closed = createTargetPolicy();

function ruleOf(decision: TargetDecision): string {
  return decision.allowed ? 'allowed' : decision.rule;
}

function urlRule(policy: TargetPolicy, url: string): string {
  return ruleOf(policy.checkUrl(url));
}

describe('the default policy refuses every spelling of the metadata address', () => {
  it.each([
    'http://169.254.169.254/latest/meta-data/',
    'http://2852039166/',
    'http://0xA9FEA9FE/',
    'http://0xa9fea9fe/',
    'http://0251.0376.0251.0376/',
    'http://0xA9.0376.169.0xFE/',
    'http://169.254.43518/',
    'http://0251.0xfe.43518/',
    'http://[::ffff:169.254.169.254]/',
    'http://[::ffff:a9fe:a9fe]/',
    'http://[::ffff:0:a9fe:a9fe]/',
    'http://[64:ff9b::a9fe:a9fe]/',
    'http://[2002:a9fe:a9fe::1]/',
    'http://[fd00:ec2::254]/',
    'http://[FD00:EC2:0:0:0:0:0:254]/',
    'https://169.254.169.254:8443/',
    'ws://169.254.169.254/',
    'http://169.254.170.2/v2/credentials',
    'http://metadata.google.internal/computeMetadata/v1/',
    'http://METADATA.google.internal./',
  ])('%s', (url) => {
    expect(urlRule(closed, url)).toBe('metadata');
  });

  it('after resolution too, whatever name led there', () => {
    expect(ruleOf(closed.checkAddress('169.254.169.254', 80, 'innocent.example.com'))).toBe('metadata');
    expect(ruleOf(closed.checkAddress('::ffff:169.254.169.254', 80, 'innocent.example.com'))).toBe('metadata');
    expect(ruleOf(closed.checkAddress('fd00:ec2::254', 80, 'innocent.example.com'))).toBe('metadata');
  });

  it('even when an operator allows the whole link-local range', () => {
    const open = createTargetPolicy({ allow: parseTargetRules('169.254.0.0/16,fd00::/8') });
    expect(urlRule(open, 'http://169.254.169.254/')).toBe('metadata');
    expect(urlRule(open, 'http://[fd00:ec2::254]/')).toBe('metadata');
    expect(urlRule(open, 'http://169.254.1.1/')).toBe('allowed');
  });
});

describe('the default policy refuses internal ranges', () => {
  it.each([
    ['http://127.0.0.1:8080/', 'loopback'],
    ['http://127.1/', 'loopback'],
    ['http://0x7f000001/', 'loopback'],
    ['http://2130706433/', 'loopback'],
    ['http://0177.0.0.1/', 'loopback'],
    ['http://127.255.255.254/', 'loopback'],
    ['http://[::1]/', 'loopback'],
    ['http://[::ffff:127.0.0.1]/', 'loopback'],
    ['http://[::ffff:7f00:1]/', 'loopback'],
    ['http://[0:0:0:0:0:0:0:1]/', 'loopback'],
    ['http://localhost:3000/', 'loopback'],
    ['http://api.localhost/', 'loopback'],
    ['http://0.0.0.0/', 'unspecified'],
    ['http://0/', 'unspecified'],
    ['http://[::]/', 'unspecified'],
    ['http://10.0.0.1/', 'private'],
    ['http://10.255.255.255/', 'private'],
    ['http://012.1/', 'private'],
    ['http://172.16.0.1/', 'private'],
    ['http://172.31.255.254/', 'private'],
    ['http://192.168.1.1/', 'private'],
    ['http://3232235777/', 'private'],
    ['http://100.64.0.1/', 'private'],
    ['http://[fc00::1]/', 'private'],
    ['http://[fd12:3456::1]/', 'private'],
    ['http://[::ffff:10.0.0.1]/', 'private'],
    ['http://169.254.1.1/', 'link_local'],
    ['http://[fe80::1]/', 'link_local'],
    ['http://[febf::1]/', 'link_local'],
    ['http://224.0.0.1/', 'reserved'],
    ['http://255.255.255.255/', 'reserved'],
    ['http://[ff02::1]/', 'reserved'],
  ])('%s is %s', (url, rule) => {
    expect(urlRule(closed, url)).toBe(rule);
  });

  it('allows public addresses and names next to those ranges', () => {
    for (const url of [
      'http://172.15.255.255/',
      'http://172.32.0.1/',
      'http://192.169.0.1/',
      'http://11.0.0.1/',
      'http://8.8.8.8/',
      'https://example.com/',
      'wss://example.com/socket',
      'http://[2606:4700::1]/',
      'http://[fe00::1]/',
      'http://[64:ff9b::808:808]/',
    ]) {
      expect(urlRule(closed, url)).toBe('allowed');
    }
  });
});

describe('schemes', () => {
  it.each([
    'file:///etc/passwd',
    'chrome://settings',
    'view-source:http://example.com/',
    'data:text/html,<h1>hi</h1>',
    'javascript:alert(1)',
    'ftp://example.com/',
    'blob:https://example.com/1234',
    'about:blank',
    'gopher://example.com/',
  ])('%s is refused', (url) => {
    expect(urlRule(closed, url)).toBe('scheme');
  });

  it('ws: and wss: follow the host rules', () => {
    expect(urlRule(closed, 'ws://127.0.0.1:9000/')).toBe('loopback');
    expect(urlRule(closed, 'wss://10.0.0.1/')).toBe('private');
    expect(urlRule(closed, 'ws://example.com/')).toBe('allowed');
  });

  it('a string that is no URL is refused as such', () => {
    expect(urlRule(closed, 'not a url')).toBe('invalid_url');
    expect(urlRule(closed, 'http://exa mple.com/')).toBe('invalid_url');
  });
});

describe('allow and deny', () => {
  const testSetUp = createTargetPolicy({ allow: parseTargetRules('127.0.0.1/32', 'TARGET_ALLOW') });

  it('allow opens only what it names', () => {
    expect(urlRule(testSetUp, 'http://127.0.0.1:4000/')).toBe('allowed');
    expect(urlRule(testSetUp, 'http://127.0.0.2:4000/')).toBe('loopback');
    expect(urlRule(testSetUp, 'http://[::1]:4000/')).toBe('loopback');
    expect(urlRule(testSetUp, 'http://10.0.0.1/')).toBe('private');
    expect(ruleOf(testSetUp.checkAddress('::ffff:127.0.0.1', 4000, 'fixture.test'))).toBe('allowed');
  });

  it('localhost is allowed when one loopback address is', () => {
    expect(urlRule(testSetUp, 'http://localhost:4000/')).toBe('allowed');
  });

  it('deny wins over allow', () => {
    const policy = createTargetPolicy({
      allow: parseTargetRules('127.0.0.0/8, staging.corp.example'),
      deny: parseTargetRules('127.0.0.2, 127.0.0.1:6000, *.corp.example'),
    });
    expect(urlRule(policy, 'http://127.0.0.3/')).toBe('allowed');
    expect(urlRule(policy, 'http://127.0.0.2/')).toBe('deny_list');
    expect(urlRule(policy, 'http://127.0.0.1:6001/')).toBe('allowed');
    expect(urlRule(policy, 'http://127.0.0.1:7000/')).toBe('allowed');
    expect(urlRule(policy, 'http://staging.corp.example/')).toBe('deny_list');
  });

  it('deny rules close public names and their resolved addresses', () => {
    const policy = createTargetPolicy({ deny: parseTargetRules('*.example.org, 203.0.114.0/24, [2606:4700::1]:443') });
    expect(urlRule(policy, 'https://shop.example.org/')).toBe('deny_list');
    expect(urlRule(policy, 'https://a.b.EXAMPLE.org./')).toBe('deny_list');
    expect(urlRule(policy, 'https://example.org/')).toBe('allowed');
    expect(urlRule(policy, 'https://notexample.org/')).toBe('allowed');
    expect(ruleOf(policy.checkAddress('203.0.114.7', 443, 'cdn.example.net'))).toBe('deny_list');
    expect(urlRule(policy, 'https://[2606:4700::1]/')).toBe('deny_list');
    expect(urlRule(policy, 'http://[2606:4700::1]/')).toBe('allowed');
  });

  it('a host name allow opens what that name resolves to, and only for that name', () => {
    const policy = createTargetPolicy({ allow: parseTargetRules('staging.corp.example') });
    expect(ruleOf(policy.checkAddress('10.1.2.3', 443, 'staging.corp.example'))).toBe('allowed');
    expect(ruleOf(policy.checkAddress('10.1.2.3', 443, 'other.corp.example'))).toBe('private');
    expect(ruleOf(policy.checkAddress('10.1.2.3', 443))).toBe('private');
  });

  it('names resolving inside are refused after resolution, saying so', () => {
    const decision = closed.checkAddress('127.0.0.1', 80, 'internal.test');
    expect(decision).toEqual({
      allowed: false,
      rule: 'loopback',
      host: 'internal.test',
      detail:
        'internal.test resolves to a loopback address (rule: loopback); to allow it, set TARGET_ALLOW=internal.test in the environment of the API and of every worker (docs/NETWORK_POLICY.md)',
    });
    expect(urlRule(closed, 'http://internal.test/')).toBe('allowed');
  });
});

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

describe('narrowPolicy', () => {
  const base = createTargetPolicy({ allow: parseTargetRules('127.0.0.1/32') });

  it('a workspace deny list closes more', () => {
    const narrowed = narrowPolicy(base, { deny: parseTargetRules('*.ads.example, 8.8.8.8') });
    expect(urlRule(narrowed, 'https://x.ads.example/')).toBe('workspace_deny');
    expect(urlRule(narrowed, 'http://8.8.8.8/')).toBe('workspace_deny');
    expect(urlRule(narrowed, 'https://example.com/')).toBe('allowed');
  });

  it('a workspace allow list keeps runs to its targets', () => {
    const narrowed = narrowPolicy(base, { allow: parseTargetRules('*.shop.example, 203.0.114.0/24') });
    expect(urlRule(narrowed, 'https://www.shop.example/')).toBe('allowed');
    expect(urlRule(narrowed, 'http://8.8.8.8/')).toBe('workspace_allow_list');
    // A name the rules cannot judge yet: decided on its addresses.
    expect(urlRule(narrowed, 'https://other.example/')).toBe('allowed');
    expect(ruleOf(narrowed.checkAddress('203.0.114.9', 443, 'other.example'))).toBe('allowed');
    expect(ruleOf(narrowed.checkAddress('8.8.8.8', 443, 'other.example'))).toBe('workspace_allow_list');
  });

  it('a workspace allow list of names only refuses other names at once', () => {
    const narrowed = narrowPolicy(base, { allow: parseTargetRules('*.shop.example') });
    expect(urlRule(narrowed, 'https://other.example/')).toBe('workspace_allow_list');
  });

  it('never widens: what the deployment refuses stays refused', () => {
    const narrowed = narrowPolicy(base, {
      allow: parseTargetRules('10.0.0.0/8, 169.254.169.254, 127.0.0.0/8, localhost, 0.0.0.0/0, ::/0'),
    });
    expect(urlRule(narrowed, 'http://10.0.0.1/')).toBe('private');
    expect(urlRule(narrowed, 'http://169.254.169.254/')).toBe('metadata');
    expect(urlRule(narrowed, 'http://127.0.0.2/')).toBe('loopback');
    expect(urlRule(narrowed, 'file:///etc/passwd')).toBe('scheme');
    expect(urlRule(narrowed, 'http://127.0.0.1/')).toBe('allowed');
    expect(ruleOf(narrowed.checkAddress('10.0.0.1', 80, 'localhost'))).toBe('private');
  });

  it('narrowing twice keeps both restrictions', () => {
    const once = narrowPolicy(base, { deny: parseTargetRules('a.example') });
    const twice = narrowPolicy(once, { deny: parseTargetRules('b.example') });
    expect(urlRule(twice, 'https://a.example/')).toBe('workspace_deny');
    expect(urlRule(twice, 'https://b.example/')).toBe('workspace_deny');
    expect(urlRule(twice, 'https://c.example/')).toBe('allowed');
  });
});
