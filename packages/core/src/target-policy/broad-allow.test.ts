import { broadAllowWarnings } from './broad-allow';
import type { LookupAll } from './resolve';
import { parseTargetRules } from './rules';

// Pure: the start-up warning for allow rules that open every service of an inside address.

const lookup: LookupAll = async (name) => {
  const answers: Record<string, { address: string; family: 4 | 6 }[]> = {
    'db.corp.example': [{ address: '10.0.0.5', family: 4 }],
    'shop.example': [{ address: '93.184.215.14', family: 4 }],
  };
  const found = answers[name];
  if (!found) throw new Error(`ENOTFOUND ${name}`);
  return Promise.resolve(found);
};

async function warned(text: string): Promise<string[]> {
  return broadAllowWarnings(parseTargetRules(text, 'TARGET_ALLOW'), { lookup });
}

describe('a rule that opens every port of a loopback or private address is named at start', () => {
  it('127.0.0.1/32: which rule, why, and what to write instead', async () => {
    expect(await warned('127.0.0.1/32')).toEqual([
      'TARGET_ALLOW: "127.0.0.1/32" opens every port of a loopback address, so runs can reach every service ' +
        'listening there (a database, a message broker, an admin console), not only the site under test; allow ' +
        "only the site's port instead: 127.0.0.1:<port> (or a few ports, 127.0.0.1:<first>-<last>) " +
        '(docs/NETWORK_POLICY.md)',
    ]);
  });

  it.each([
    ['127.0.0.1', 'a loopback address', '127.0.0.1:<port>'],
    ['127.0.0.0/8', 'a loopback address', '127.0.0.0/8:<port>'],
    ['::1', 'a loopback address', '[::1]:<port>'],
    ['::1/128', 'a loopback address', '[::1]:<port>'],
    ['::ffff:127.0.0.1', 'a loopback address', '[::ffff:7f00:1]:<port>'],
    ['localhost', 'a loopback address', 'localhost:<port>'],
    ['*.localhost', 'a loopback address', '*.localhost:<port>'],
    ['10.1.2.3', 'a private network address', '10.1.2.3:<port>'],
    ['172.16.0.0/12', 'a private network address', '172.16.0.0/12:<port>'],
    ['192.168.0.0/16', 'a private network address', '192.168.0.0/16:<port>'],
    ['192.168.1.0/24', 'a private network address', '192.168.1.0/24:<port>'],
    ['fd00::/8', 'a private network address', 'fd00::/8:<port>'],
    ['169.254.0.0/16', 'a link-local address', '169.254.0.0/16:<port>'],
    ['0.0.0.0', 'the unspecified address (this machine)', '0.0.0.0:<port>'],
    ['127.0.0.1:1-65535', 'a loopback address', '127.0.0.1:<port>'],
    ['db.corp.example', 'db.corp.example, which resolves to a private network address', 'db.corp.example:<port>'],
  ])('%s opens every port of %s; the warning suggests %s', async (rule, what, instead) => {
    const [warning] = await warned(rule);
    expect(warning).toContain(`"${rule}" opens `);
    expect(warning).toContain(` of ${what}, so runs can reach every service listening there`);
    expect(warning).toContain(`instead: ${instead} `);
  });

  it('a wide range names what it covers', async () => {
    expect(await warned('0.0.0.0/0')).toEqual([
      expect.stringContaining(
        '"0.0.0.0/0" opens every port of unspecified, loopback, private network and link-local addresses',
      ),
    ]);
    expect(await warned('127.0.0.1:1024-65535')).toEqual([
      expect.stringContaining('"127.0.0.1:1024-65535" opens 64512 ports (1024-65535) of a loopback address'),
    ]);
  });

  it.each([
    '127.0.0.1:8080',
    '[::1]:8080',
    '127.0.0.1:3000-3999',
    '127.0.0.0/8:4010',
    '10.0.0.0/8:443',
    'localhost:4010',
    'db.corp.example:5432',
    'shop.example',
    '*.corp.example',
    'gone.example',
    '203.0.113.0/24',
    '8.8.8.8',
  ])('%s is no warning', async (rule) => {
    expect(await warned(rule)).toEqual([]);
  });

  it('one warning a rule, in order, whatever the rest of the list is', async () => {
    const warnings = await warned('127.0.0.1:4010, 127.0.0.1/32, shop.example, 10.0.0.0/8');
    expect(warnings.map((warning) => /"([^"]+)"/.exec(warning)?.[1])).toEqual(['127.0.0.1/32', '10.0.0.0/8']);
  });

  it('without a resolver only localhost is judged by name', async () => {
    const rules = parseTargetRules('db.corp.example, localhost', 'TARGET_ALLOW');
    const warnings = await broadAllowWarnings(rules);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain('"localhost" opens every port of a loopback address');
  });

  it('a resolver that never answers is given up on', async () => {
    jest.useFakeTimers();
    try {
      const hanging: LookupAll = () => new Promise(() => undefined);
      const pending = broadAllowWarnings(parseTargetRules('slow.example', 'TARGET_ALLOW'), { lookup: hanging });
      await jest.advanceTimersByTimeAsync(2000);
      expect(await pending).toEqual([]);
    } finally {
      jest.useRealTimers();
    }
  });
});
