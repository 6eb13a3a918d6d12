import request from 'supertest';
import { applyProject } from '../../packages/admin/src/operations';
import { createTenant, sampleProject, uniqueTag } from '../support/harness';
import { readApiConfig } from '../../apps/api/src/config';
import { bearer, buildTestApi, type TestApi } from './api-harness';

// Two apps on one Redis prefix: two replicas of one deployment.
const prefix = `${process.env.REDIS_PREFIX}-rl-${uniqueTag()}`;
let one: TestApi;
let two: TestApi;
beforeAll(() => {
  one = buildTestApi({ prefix });
  two = buildTestApi({ prefix, db: one.db });
});
afterAll(async () => {
  await two.close();
  await one.close();
});

describe('per-key rate limit (60 per minute by default)', () => {
  it('the 61st request in a minute is 429 with Retry-After and RateLimit headers; two replicas share the count', async () => {
    const t = await createTenant(one.db);
    const statuses: number[] = [];
    for (let i = 0; i < 60; i++) {
      const app = i % 2 === 0 ? one.app : two.app;
      const res = await request(app).get('/api/v1/runs/run_x').set(bearer(t.key));
      statuses.push(res.status);
      if (i === 0) {
        expect(res.headers['ratelimit-policy']).toBe('60;w=60');
        expect(res.headers.ratelimit).toMatch(/^limit=60, remaining=59, reset=\d+$/);
      }
    }
    expect(statuses.every((s) => s === 404)).toBe(true);
    const limited = await request(two.app).get('/api/v1/runs/run_x').set(bearer(t.key));
    expect(limited.status).toBe(429);
    expect(limited.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(limited.body).toMatchObject({ code: 'rate_limited', status: 429, type: '/api/v1/problems/rate_limited' });
    expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
    expect(Number(limited.headers['retry-after'])).toBeLessThanOrEqual(60);
    expect(limited.headers.ratelimit).toMatch(/remaining=0/);
    expect((await request(one.app).get('/api/v1/runs/run_x').set(bearer(t.key))).status).toBe(429);

    // Another key of the same workspace has its own budget.
    const other = await createTenant(one.db);
    expect((await request(one.app).get('/api/v1/runs/run_x').set(bearer(other.key))).status).toBe(404);
  });

  it('check order: rate limit (429) comes before the body (400) and creates nothing', async () => {
    const own = buildTestApi({ env: { RATE_LIMIT_PER_MINUTE: '2' }, db: one.db });
    try {
      const t = await createTenant(one.db);
      await applyProject(one.db, t.workspace.id, sampleProject('shop', { count: 1 }));
      expect((await request(own.app).post('/api/v1/runs').set(bearer(t.key)).send({ bad: 1 })).status).toBe(400);
      expect(
        (await request(own.app).post('/api/v1/runs').set(bearer(t.key)).send({ projectSlug: 'shop' })).status,
      ).toBe(201);
      const res = await request(own.app)
        .post('/api/v1/runs')
        .set(bearer(t.key))
        .set('Content-Type', 'application/json')
        .send('{malformed');
      expect(res.status).toBe(429);
      expect(
        (await request(own.app).post('/api/v1/runs').set(bearer(t.key)).send({ projectSlug: 'shop' })).status,
      ).toBe(429);
      expect(await one.db.run.count({ where: { workspaceId: t.workspace.id } })).toBe(1);
      // Counters live under the deployment prefix.
      expect(await own.redis.exists(`${own.config.redisPrefix}:rl:${t.keyId}`)).toBe(1);
    } finally {
      await own.close();
    }
  });

  it('RATE_LIMIT_WINDOW_MS sets the window: counted, announced in the headers and the 429, and the key is served again after Retry-After', async () => {
    // Requests of a known key are counted in authentication's round trip, so both counters must use it.
    const own = buildTestApi({ env: { RATE_LIMIT_PER_MINUTE: '2', RATE_LIMIT_WINDOW_MS: '2000' }, db: one.db });
    try {
      const t = await createTenant(one.db);
      const get = () => request(own.app).get('/api/v1/runs/run_x').set(bearer(t.key));
      const first = await get();
      expect(first.status).toBe(404);
      expect(first.headers['ratelimit-policy']).toBe('2;w=2');
      expect(first.headers.ratelimit).toMatch(/^limit=2, remaining=1, reset=[0-2]$/);
      expect((await get()).status).toBe(404);
      const limited = await get();
      expect(limited.status).toBe(429);
      expect((limited.body as { detail: string }).detail).toBe(
        `This API key is limited to 2 requests per 2 s; retry after ${limited.headers['retry-after']} s.`,
      );
      const retryAfter = Number(limited.headers['retry-after']);
      expect(retryAfter).toBeGreaterThan(0);
      expect(retryAfter).toBeLessThanOrEqual(2);
      expect(await own.redis.pttl(`${own.config.redisPrefix}:rl:${t.keyId}`)).toBeLessThanOrEqual(2_000);
      await new Promise((resolve) => setTimeout(resolve, retryAfter * 1_000));
      expect((await get()).status).toBe(404);
      // That request's key was known, so authentication's round trip started the new window.
      expect(await own.redis.pttl(`${own.config.redisPrefix}:rl:${t.keyId}`)).toBeLessThanOrEqual(2_000);
    } finally {
      await own.close();
    }
  });

  it('RATE_LIMIT_WINDOW_MS must be a whole number of milliseconds from 1000 to 3600000', () => {
    for (const value of ['999', '3600001', '1.5s'])
      expect(() => readApiConfig({ ...process.env, RATE_LIMIT_WINDOW_MS: value })).toThrow(/RATE_LIMIT_WINDOW_MS/);
    expect(readApiConfig({ ...process.env, RATE_LIMIT_WINDOW_MS: undefined }).rateLimitWindowMs).toBe(60_000);
  });

  it('authentication comes first: a bad key is 401 even for a key-holder that is over its limit', async () => {
    const res = await request(one.app).get('/api/v1/runs/run_x').set(bearer('trk_bad'));
    expect(res.status).toBe(401);
  });
});
