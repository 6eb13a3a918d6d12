import { networkInterfaces } from 'node:os';
import { readTargetPolicyConfig, resolveTargetPolicy } from './config';
import type { LookupAll } from './resolve';

// What the deployment's environment makes the policy protect; a table stands in for DNS.

const OWN = {
  databaseUrl: 'postgresql://u:p@db.internal:6543/testrun',
  redisUrl: 'redis://127.0.0.1:6390',
  publicBaseUrl: 'https://testrun.example.com',
};

const lookup: LookupAll = (hostname) =>
  hostname === 'db.internal' ? Promise.resolve([{ address: '10.0.0.5', family: 4 }]) : Promise.reject(new Error('no'));

it("protects the services' ports, the API's, the metrics and worker HTTP ports, on this machine", () => {
  const config = readTargetPolicyConfig(
    { PORT: '3100', METRICS_PORT: '9191', WORKER_HTTP_PORT: '9464', TARGET_ALLOW: '127.0.0.0/8' },
    OWN,
  );
  expect([...config.protectedPorts].sort()).toEqual([3100, 6390, 6543, 9191, 9464]);
  expect(config.protectedHosts).toEqual(['db.internal', '127.0.0.1', 'testrun.example.com']);
  const listed = Object.values(networkInterfaces()).flatMap((entries) => (entries ?? []).map((e) => e.address));
  expect(config.machineAddresses).toEqual(listed);
});

it('skips port variables that name no port, and adds a local public URL port', () => {
  const config = readTargetPolicyConfig(
    { METRICS_PORT: 'off', WORKER_HTTP_PORT: '0' },
    { ...OWN, publicBaseUrl: 'http://localhost:3200' },
  );
  expect([...config.protectedPorts].sort()).toEqual([3200, 6390, 6543]);
});

it("refuses the services' ports on every address the deployment's host names resolve to", async () => {
  const config = readTargetPolicyConfig({ TARGET_ALLOW: '10.0.0.0/8, 127.0.0.0/8', WORKER_HTTP_PORT: '9464' }, OWN);
  const policy = await resolveTargetPolicy(config, lookup);
  expect(policy.checkAddress('10.0.0.5', 9464, 'db-replica.test')).toMatchObject({ rule: 'protected_endpoint' });
  expect(policy.checkUrl('http://10.0.0.5:6390/')).toMatchObject({ rule: 'protected_endpoint' });
  expect(policy.checkUrl('http://127.0.0.2:6543/')).toMatchObject({ rule: 'protected_endpoint' });
  expect(policy.checkUrl('http://10.0.0.5:8080/')).toEqual({ allowed: true });
});
