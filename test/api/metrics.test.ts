import request from 'supertest';
import { readApiConfig } from '../../apps/api/src';
import { createTenant, uniqueTag } from '../support/harness';
import { parsePrometheus, sampleSum } from '../support/prometheus';
import { bearer, buildTestApi, type TestApi } from './api-harness';

// The API's /metrics in process: where it is served, the route labels of every kind of request, and
// two apps in one process counting apart (each has a registry of its own).
const prefix = `${process.env.REDIS_PREFIX}-metrics-${uniqueTag()}`;
let one: TestApi;
let two: TestApi;
beforeAll(() => {
  one = buildTestApi({ prefix, env: { RATE_LIMIT_PER_MINUTE: '3' } });
  two = buildTestApi({ prefix, db: one.db });
});
afterAll(async () => {
  await two.close();
  await one.close();
});

async function scrapeApp(api: TestApi) {
  const res = await request(api.app).get('/metrics');
  expect(res.status).toBe(200);
  expect(res.headers['content-type']).toMatch(/^text\/plain; version=0\.0\.4/);
  return parsePrometheus(res.text).samples;
}

const COUNT = 'testrun_api_request_duration_seconds_count';

it('labels requests by route template, never by path, and counts per-key refusals', async () => {
  const t = await createTenant(one.db);
  const runId = `run_${uniqueTag()}`;
  await request(one.app).get(`/api/v1/runs/${runId}`).set(bearer(t.key)).expect(404);
  await request(one.app).get('/api/v1/problems/not_found').expect(200);
  await request(one.app).get(`/view/runs/${runId}/sometoken`).expect(404);
  await request(one.app).get(`/nowhere/${runId}`).expect(404);
  await request(one.app).get('/api/v1/suite-runs/s').expect(401);
  // Over RATE_LIMIT_PER_MINUTE=3 for this key (the first request above was its first).
  for (let i = 0; i < 3; i++) await request(one.app).get(`/api/v1/runs/${runId}`).set(bearer(t.key));

  const samples = await scrapeApp(one);
  expect(sampleSum(samples, COUNT, { route: '/api/v1/runs/:runId', method: 'GET', status: '404' })).toBe(3);
  // Refused by the rate limit before the route matched: labelled with the group of routes.
  expect(sampleSum(samples, COUNT, { route: '/api/v1/runs/*', method: 'GET', status: '429' })).toBe(1);
  expect(sampleSum(samples, COUNT, { route: '/api/v1/problems/:code', status: '200' })).toBe(1);
  expect(sampleSum(samples, COUNT, { route: '/view/runs/:id/:token', status: '404' })).toBe(1);
  expect(sampleSum(samples, COUNT, { route: 'unmatched', status: '404' })).toBe(1);
  expect(sampleSum(samples, COUNT, { route: '/api/v1/suite-runs/*', status: '401' })).toBe(1);
  expect(sampleSum(samples, 'testrun_api_rate_limit_refusals_total', { scope: 'key' })).toBe(1);
  const labels = samples.flatMap((s) => Object.values(s.labels)).join(' ');
  for (const secret of [runId, 'sometoken', t.workspace.id, t.keyId]) expect(labels).not.toContain(secret);
});

it('two apps in one process count apart', async () => {
  await request(two.app).get('/healthz').expect(200);
  await request(two.app).get('/healthz').expect(200);
  const ofTwo = await scrapeApp(two);
  const ofOne = await scrapeApp(one);
  expect(sampleSum(ofTwo, COUNT, { route: '/healthz' })).toBe(2);
  expect(sampleSum(ofOne, COUNT, { route: '/healthz' })).toBe(0);
  expect(sampleSum(ofOne, 'process_cpu_user_seconds_total')).toBeGreaterThan(0);
});

it('METRICS_PORT moves /metrics off the API port, or turns it off', async () => {
  for (const value of ['9464', 'off']) {
    const api = buildTestApi({ env: { METRICS_PORT: value } });
    try {
      const res = await request(api.app).get('/metrics');
      expect(res.status).toBe(404);
      expect(res.body).toMatchObject({ code: 'not_found' });
    } finally {
      await api.close();
    }
  }
  expect(() => readApiConfig({ ...process.env, METRICS_PORT: 'api' })).toThrow(
    'METRICS_PORT must be a port number or "off", got "api"',
  );
  expect(readApiConfig({ ...process.env, METRICS_PORT: '9100', METRICS_HOST: '127.0.0.1' }).metrics).toEqual({
    where: 'port',
    port: 9100,
    host: '127.0.0.1',
  });
});
