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
        'internal.test resolves to a loopback address (rule: loopback); to allow it, set TARGET_ALLOW=internal.test:80 in the environment of the API and of every worker (docs/NETWORK_POLICY.md)',
    });
    expect(urlRule(closed, 'http://internal.test/')).toBe('allowed');
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
