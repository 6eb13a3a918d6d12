import { createTargetPolicy, type TargetDecision } from './policy';
import { parseTargetRules } from './rules';

// Pure decision tests: a refusal an operator can lift says how, and the value it names does lift it.

const closed = createTargetPolicy();

/** The `TARGET_ALLOW=<value>` a refusal suggests, or undefined when it suggests none. */
function suggested(decision: TargetDecision): string | undefined {
  if (decision.allowed) throw new Error('expected a refusal');
  return /set TARGET_ALLOW=(\S+) in the environment of the API and of every worker/.exec(decision.detail)?.[1];
}

describe('a refusal of a non-public target names TARGET_ALLOW and where to set it', () => {
  it.each([
    ['http://127.0.0.1:8080/', '127.0.0.1:8080', 'http://127.0.0.1:3306/'],
    ['http://localhost:8080/', 'localhost:8080', 'http://localhost:5672/'],
    ['http://[::1]:8080/', '[::1]:8080', 'http://[::1]:4222/'],
    ['http://10.0.0.7/', '10.0.0.7:80', 'http://10.0.0.7:1883/'],
    ['https://192.168.1.20/', '192.168.1.20:443', 'http://192.168.1.20:4369/'],
    ['http://192.168.1.20:3000/', '192.168.1.20:3000', 'http://192.168.1.20:3001/'],
  ])('%s suggests TARGET_ALLOW=%s, which opens it and no other port of the host', (url, value, otherPort) => {
    const decision = closed.checkUrl(url);
    expect(suggested(decision)).toBe(value);
    expect(decision.allowed ? '' : decision.detail).toContain('docs/NETWORK_POLICY.md');
    const opened = createTargetPolicy({ allow: parseTargetRules(value, 'TARGET_ALLOW') });
    expect(opened.checkUrl(url)).toEqual({ allowed: true });
    expect(opened.checkUrl(otherPort)).toMatchObject({ allowed: false });
  });

  it('a name resolving inside suggests the name and port, which open it at the egress check', () => {
    expect(suggested(closed.checkAddress('127.0.0.1', 8080, 'shop.internal'))).toBe('shop.internal:8080');
    const opened = createTargetPolicy({ allow: parseTargetRules('shop.internal:8080', 'TARGET_ALLOW') });
    expect(opened.checkAddress('127.0.0.1', 8080, 'shop.internal')).toEqual({ allowed: true });
    expect(opened.checkAddress('127.0.0.1', 3306, 'shop.internal')).toMatchObject({ rule: 'loopback' });
  });

  it('suggests nothing where TARGET_ALLOW cannot open the target', () => {
    const denied = createTargetPolicy({
      allow: parseTargetRules('127.0.0.0/8', 'TARGET_ALLOW'),
      deny: parseTargetRules('127.0.0.9', 'TARGET_DENY'),
    });
    for (const decision of [
      closed.checkUrl('http://169.254.169.254/'),
      closed.checkUrl('http://127.0.0.1:22/'),
      closed.checkUrl('file:///etc/passwd'),
      denied.checkUrl('http://127.0.0.9/'),
    ])
      expect(suggested(decision)).toBeUndefined();
  });
});
