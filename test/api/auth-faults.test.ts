// Authentication faults: unknown and revoked keys look the same, TRUST_PROXY counts hops so a
// rotating X-Forwarded-For cannot reset the failed-authentication limit.
import request from 'supertest';
import { changeApiKey } from '../../packages/admin/src/operations';
import { generateApiKey } from '@testrun/core/api-keys';
import { ConfigError } from '@testrun/core/env';
import { readApiConfig } from '../../apps/api/src';
import { createTenant, uniqueTag } from '../support/harness';
import { bearer, buildTestApi, type TestApi } from './api-harness';
import { problemOf } from './typed';

const apis: TestApi[] = [];
afterAll(async () => {
  await Promise.all(apis.map((api) => api.close()));
});
function api(env: Record<string, string> = {}, prefix?: string): TestApi {
  const made = buildTestApi({ env, ...(prefix === undefined ? {} : { prefix }) });
  apis.push(made);
  return made;
}

/** What a client sees of a 401, minus the request id that differs on purpose. */
function visible(res: request.Response) {
  const varying = new Set(['x-request-id', 'date']);
  const headers = Object.fromEntries(Object.entries(res.headers).filter(([name]) => !varying.has(name)));
  return { status: res.status, headers, body: res.text };
}

describe('unknown and revoked keys', () => {
  it('get byte-identical 401 problems', async () => {
    const one = api();
    const t = await createTenant(one.db);
    await changeApiKey(one.db, t.keyId, 'revoke', one.announce);
    const revoked = await request(one.app).get('/api/v1/runs/run_x').set(bearer(t.key));
    const unknown = await request(one.app).get('/api/v1/runs/run_x').set(bearer(generateApiKey().key));
    problemOf(revoked, 'unauthorized');
    expect(visible(revoked)).toEqual(visible(unknown));
  });
});

describe('TRUST_PROXY', () => {
  it('reads false, hops, true as one hop, and proxy addresses; refuses anything else', () => {
    const read = (value: string) => readApiConfig({ ...process.env, TRUST_PROXY: value }).trustProxy;
    expect(read('false')).toBe(false);
    expect(read('0')).toBe(false);
    expect(read('2')).toBe(2);
    expect(read('true')).toBe(1);
    expect(read('10.0.0.1, 10.1.0.0/16,loopback')).toEqual(['10.0.0.1', '10.1.0.0/16', 'loopback']);
    expect(() => read('yes')).toThrow(ConfigError);
    expect(() => read('10.0.0.0/99')).toThrow(/TRUST_PROXY/);
  });

  it('with one hop, rotating left-most X-Forwarded-For entries do not reset the failed-authentication limit', async () => {
    const one = api({ TRUST_PROXY: '1', RATE_LIMIT_UNAUTHENTICATED_PER_MINUTE: '3' });
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await request(one.app)
        .get('/api/v1/runs/run_x')
        .set(bearer(generateApiKey().key))
        .set('X-Forwarded-For', `198.51.100.${i}, 203.0.113.7`);
      statuses.push(res.status);
    }
    expect(statuses).toEqual([401, 401, 401, 429, 429]);
    // Another client behind the same proxy (another right-most entry) has its own count.
    const other = await request(one.app)
      .get('/api/v1/runs/run_x')
      .set(bearer(generateApiKey().key))
      .set('X-Forwarded-For', '198.51.100.1, 203.0.113.8');
    expect(other.status).toBe(401);
  });

  it('with proxy addresses, only entries added by those proxies are skipped', async () => {
    const one = api({ TRUST_PROXY: 'loopback', RATE_LIMIT_UNAUTHENTICATED_PER_MINUTE: '2' });
    const statuses: number[] = [];
    for (let i = 0; i < 4; i++) {
      const res = await request(one.app)
        .get('/api/v1/runs/run_x')
        .set(bearer(generateApiKey().key))
        .set('X-Forwarded-For', `198.51.100.${i}, 203.0.113.9, 127.0.0.1`);
      statuses.push(res.status);
    }
    expect(statuses).toEqual([401, 401, 429, 429]);
  });
});

describe('an address over the failed-authentication limit', () => {
  const badKey = (one: TestApi, from: string) =>
    request(one.app).get('/api/v1/runs/run_x').set(bearer(generateApiKey().key)).set('X-Forwarded-For', from);

  it('is refused with 429 and Retry-After even with a valid key, on every replica, until its window passes', async () => {
    const prefix = `${process.env.REDIS_PREFIX}-lock-${uniqueTag()}`;
    const env = { TRUST_PROXY: '1', RATE_LIMIT_UNAUTHENTICATED_PER_MINUTE: '2' };
    const one = api(env, prefix);
    const t = await createTenant(one.db);
    const valid = (app: TestApi, from: string) =>
      request(app.app).get('/api/v1/runs/run_x').set(bearer(t.key)).set('X-Forwarded-For', from);
    // The key is known to this replica (in its cache) before the address goes over the limit.
    expect((await valid(one, '198.51.100.20')).status).toBe(404);
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) statuses.push((await badKey(one, '198.51.100.20')).status);
    expect(statuses).toEqual([401, 401, 429]);
    // A valid key from that address: refused, whether the replica knows the key or not.
    const two = api(env, prefix);
    for (const replica of [one, two]) {
      const res = await valid(replica, '198.51.100.20');
      expect(problemOf(res, 'rate_limited').detail).toMatch(/missing or invalid API key from this address/);
      expect(Number(res.headers['retry-after'])).toBeGreaterThan(0);
      expect(Number(res.headers['retry-after'])).toBeLessThanOrEqual(60);
    }
    // Another address with the same key is served.
    expect((await valid(one, '198.51.100.21')).status).toBe(404);
    // Once the window has passed (its counter expires), the address is served again.
    await one.redis.pexpire(`${prefix}:rl-unauth:198.51.100.20`, 1);
    for (let i = 0; i < 50 && (await one.redis.exists(`${prefix}:rl-unauth:198.51.100.20`)) === 1; i++)
      await new Promise((resolve) => setTimeout(resolve, 20));
    expect((await valid(one, '198.51.100.20')).status).toBe(404);
    expect((await valid(two, '198.51.100.20')).status).toBe(404);
  });

  it('is an IPv6 /64: rotating the interface id does not reset the count, another /64 has its own', async () => {
    const one = api({ TRUST_PROXY: '1', RATE_LIMIT_UNAUTHENTICATED_PER_MINUTE: '3' });
    const t = await createTenant(one.db);
    const statuses: number[] = [];
    for (const from of ['2001:db8:1:2::1', '2001:db8:1:2::2', '2001:DB8:1:2:ffff:1:2:3', '2001:db8:1:2:0:0:0:4'])
      statuses.push((await badKey(one, from)).status);
    expect(statuses).toEqual([401, 401, 401, 429]);
    const valid = await request(one.app)
      .get('/api/v1/runs/run_x')
      .set(bearer(t.key))
      .set('X-Forwarded-For', '2001:db8:1:2:aaaa::5');
    problemOf(valid, 'rate_limited');
    expect((await badKey(one, '2001:db8:1:3::1')).status).toBe(401);
    // An IPv4 client seen through an IPv6 socket (::ffff:a.b.c.d) is its IPv4 address.
    for (let i = 0; i < 3; i++) await badKey(one, '192.0.2.9');
    expect((await badKey(one, '::ffff:192.0.2.9')).status).toBe(429);
  });
});
