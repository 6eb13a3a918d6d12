import { createTargetPolicy } from './policy';
import {
  protectedEndpointsFromUrls,
  resolveProtectedEndpoints,
  resolveTarget,
  TargetUnresolvedError,
  type LookupAll,
  type ResolvedAddress,
} from './resolve';
import { parseTargetRules } from './rules';

// A resolver the test controls: no query leaves the process.
function fakeLookup(table: Record<string, string[]>): LookupAll & { asked: string[] } {
  const asked: string[] = [];
  const lookup = (hostname: string): Promise<readonly ResolvedAddress[]> => {
    asked.push(hostname);
    const answers = table[hostname];
    if (!answers) return Promise.reject(new Error(`getaddrinfo ENOTFOUND ${hostname}`));
    return Promise.resolve(answers.map((address) => ({ address, family: address.includes(':') ? 6 : 4 })));
  };
  return Object.assign(lookup, { asked });
}

const policy = createTargetPolicy({ allow: parseTargetRules('127.0.0.1/32') });
const lookup = fakeLookup({
  'fixture.test': ['127.0.0.1'],
  'internal.test': ['127.0.0.2'],
  'split.test': ['127.0.0.1', '10.0.0.1'],
  'mapped.test': ['::ffff:169.254.169.254'],
  'public.test': ['93.184.215.14', '2606:2800:21f:cb07:6820:80da:af6b:8b2c'],
  'empty.test': [],
});

it('returns every checked address of an allowed name, resolved once', async () => {
  const result = await resolveTarget(policy, 'https://public.test/path', lookup);
  expect(result).toEqual({
    allowed: true,
    host: 'public.test',
    port: 443,
    addresses: [
      { address: '93.184.215.14', family: 4 },
      { address: '2606:2800:21f:cb07:6820:80da:af6b:8b2c', family: 6 },
    ],
  });
  expect(lookup.asked.filter((name) => name === 'public.test')).toHaveLength(1);
});

it('refuses a name that resolves inside, naming the name and not the address', async () => {
  const result = await resolveTarget(policy, 'http://internal.test:8080/', lookup);
  expect(result).toMatchObject({ allowed: false, rule: 'loopback', host: 'internal.test' });
  expect(JSON.stringify(result)).not.toContain('127.0.0.2');
  expect(await resolveTarget(policy, 'http://mapped.test/', lookup)).toMatchObject({ rule: 'metadata' });
});

it('refuses a name when any of its addresses is refused', async () => {
  expect(await resolveTarget(policy, 'http://split.test/', lookup)).toMatchObject({ allowed: false, rule: 'private' });
});

it('does not resolve what the URL alone refuses, nor literal addresses', async () => {
  const asked = lookup.asked.length;
  expect(await resolveTarget(policy, 'file:///etc/passwd', lookup)).toMatchObject({ rule: 'scheme' });
  expect(await resolveTarget(policy, 'http://fixture.test:25/', lookup)).toMatchObject({ rule: 'unsafe_port' });
  expect(await resolveTarget(policy, 'http://0x7f000001:4000/', lookup)).toMatchObject({
    allowed: true,
    host: '127.0.0.1',
    port: 4000,
    addresses: [{ address: '127.0.0.1', family: 4 }],
  });
  expect(await resolveTarget(policy, 'http://[::1]/', lookup)).toMatchObject({ rule: 'loopback' });
  expect(lookup.asked.length).toBe(asked);
});

it('a name that does not resolve is a network failure, not a refusal', async () => {
  await expect(resolveTarget(policy, 'http://nowhere.test/', lookup)).rejects.toBeInstanceOf(TargetUnresolvedError);
  await expect(resolveTarget(policy, 'http://empty.test/', lookup)).rejects.toBeInstanceOf(TargetUnresolvedError);
});

it('reads the deployment’s own endpoints from its URLs, without their secrets in errors', () => {
  expect(
    protectedEndpointsFromUrls([
      'postgresql://testrun:secret@db.internal/testrun',
      'redis://:pw@127.0.0.1:6380',
      undefined,
      'https://testrun.example.com',
      'http://[::1]:3000',
    ]),
  ).toEqual([
    { host: 'db.internal', port: 5432 },
    { host: '127.0.0.1', port: 6380 },
    { host: 'testrun.example.com', port: 443 },
    { host: '::1', port: 3000 },
  ]);
  expect(() => protectedEndpointsFromUrls(['mysql://user:secret@db/x'])).toThrow(/mysql:/);
  expect(() => protectedEndpointsFromUrls(['mysql://user:secret@db/x'])).not.toThrow(/secret/);
});

it('adds the addresses of named endpoints, so either spelling is refused', async () => {
  const endpoints = await resolveProtectedEndpoints(
    [
      { host: 'fixture.test', port: 5432 },
      { host: '10.0.0.9', port: 6379 },
      { host: 'gone.test', port: 3000 },
    ],
    lookup,
  );
  expect(endpoints).toEqual([
    { host: 'fixture.test', port: 5432 },
    { host: '10.0.0.9', port: 6379 },
    { host: 'gone.test', port: 3000 },
    { host: '127.0.0.1', port: 5432 },
  ]);
  const guarded = createTargetPolicy({ allow: parseTargetRules('127.0.0.0/8'), protectedEndpoints: endpoints });
  expect(guarded.checkUrl('http://127.0.0.1:5432/')).toMatchObject({ rule: 'protected_endpoint' });
});
