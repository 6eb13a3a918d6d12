// Authentication faults: unknown and revoked keys look the same, TRUST_PROXY counts hops so a
// rotating X-Forwarded-For cannot reset the failed-authentication limit.
import request from 'supertest';
import { ConfigError, changeApiKey, generateApiKey } from '@testrun/core';
import { readApiConfig } from '../../apps/api/src';
import { createTenant } from '../support/harness';
import { bearer, buildTestApi, type TestApi } from './api-harness';
import { problemOf } from './typed';

const apis: TestApi[] = [];
afterAll(async () => {
  await Promise.all(apis.map((api) => api.close()));
});
function api(env: Record<string, string> = {}): TestApi {
  const made = buildTestApi({ env });
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
