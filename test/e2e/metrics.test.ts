import type { ChildProcess } from 'node:child_process';
import { applyProject } from '../../packages/admin/src/operations';
import type { Db } from '@testrun/core/db';
import { startFixtureSite, type FixtureSite } from '../fixtures/site';
import { createTenant, testDb } from '../support/harness';
import { startRedis, stopProcess } from '../support/processes';
import { sampleSum, scrape, type Sample } from '../support/prometheus';
import { freePort, spawnService, waitForLog, waitUntil } from './support';

/**
 * Metrics and health of the real processes (the built API and worker, started as production starts
 * them): both /metrics endpoints are scraped and parsed, real runs move the figures, the worker's
 * probes answer, readiness turns 503 when the worker's Redis (a private one) goes away, and the id
 * of the request that created runs is on every worker log line of those runs.
 */
jest.setTimeout(120_000);

const WORKER_ENV = { WORKER_CONCURRENCY: '2', WORKER_VIDEO: 'off', LOG_LEVEL: 'info', WORKER_HTTP_HOST: '127.0.0.1' };

let db: Db;
let site: FixtureSite;
const children: ChildProcess[] = [];
let apiUrl = '';
let apiMetricsUrl = '';
let workerUrl = '';
let worker: ReturnType<typeof spawnService>;
let key = '';
let workspaceId = '';
let testIds: { pass: string; fail: string };

function start(name: 'api' | 'worker', env: Record<string, string>) {
  const proc = spawnService(name, env);
  children.push(proc.child);
  return proc;
}

async function post(path: string, body: unknown, headers: Record<string, string> = {}) {
  return fetch(`${apiUrl}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
  });
}

async function suiteRunDone(id: string) {
  return waitUntil(async () => {
    const s = await db.suiteRun.findUniqueOrThrow({ where: { id }, select: { status: true } });
    return s.status !== 'queued' && s.status !== 'running';
  });
}

beforeAll(async () => {
  db = testDb();
  site = await startFixtureSite();
  const [apiPort, metricsPort, workerPort] = await Promise.all([freePort(), freePort(), freePort()]);
  const api = start('api', {
    PORT: String(apiPort),
    METRICS_PORT: String(metricsPort),
    METRICS_HOST: '127.0.0.1',
    LOG_LEVEL: 'info',
    RATE_LIMIT_PER_MINUTE: '30',
    RATE_LIMIT_UNAUTHENTICATED_PER_MINUTE: '1',
  });
  worker = start('worker', { ...WORKER_ENV, WORKER_HTTP_PORT: String(workerPort) });
  apiUrl = `http://127.0.0.1:${apiPort}`;
  apiMetricsUrl = `http://127.0.0.1:${metricsPort}/metrics`;
  workerUrl = `http://127.0.0.1:${workerPort}`;
  const tenant = await createTenant(db);
  key = tenant.key;
  workspaceId = tenant.workspace.id;
  const project = await applyProject(db, workspaceId, {
    slug: 'observed',
    name: 'Observed',
    baseUrl: site.url,
    suites: [
      {
        slug: 'mixed',
        name: 'Mixed',
        tests: [
          {
            key: 'pass',
            name: 'Passes',
            steps: [
              { action: 'goto', url: '/' },
              { action: 'expectText', selector: 'h1', text: 'Testrun Shop' },
            ],
          },
          {
            key: 'fail',
            name: 'Fails',
            steps: [
              { action: 'goto', url: '/' },
              { action: 'expectText', selector: 'h1', text: 'Not this shop', timeoutMs: 500 },
            ],
          },
        ],
      },
    ],
  });
  const tests = project.suites.flatMap((s) => s.tests);
  testIds = {
    pass: tests.find((t) => t.key === 'pass')?.id ?? '',
    fail: tests.find((t) => t.key === 'fail')?.id ?? '',
  };
  await Promise.all([waitForLog(api, 'listening'), waitForLog(worker, 'worker ready')]);
});

afterAll(async () => {
  await Promise.all(children.map((c) => stopProcess(c, 'SIGKILL')));
  await site.close();
  await db.$disconnect();
});

/** Every label value of a scrape: none may name a workspace, key, run or suite run. */
function labelValues(samples: readonly Sample[]): string[] {
  return samples.flatMap((s) => Object.values(s.labels));
}

it('scrapes both endpoints, and real runs move the figures', async () => {
  const apiBefore = await scrape(apiMetricsUrl);
  const workerBefore = await scrape(`${workerUrl}/metrics`);
  for (const { types } of [apiBefore, workerBefore]) {
    expect(types.get('process_cpu_user_seconds_total')).toBe('counter');
  }
  expect(apiBefore.types.get('testrun_api_request_duration_seconds')).toBe('histogram');
  expect(workerBefore.types.get('testrun_worker_run_duration_seconds')).toBe('histogram');
  expect(workerBefore.types.get('testrun_queue_jobs')).toBe('gauge');
  expect(sampleSum(workerBefore.samples, 'testrun_worker_browser_contexts')).toBe(0);
  // Served apart from the tenant-facing port, which does not know the path.
  expect((await fetch(`${apiUrl}/metrics`)).status).toBe(404);

  const requestId = 'req-metrics-0001';
  const created = await post(
    '/api/v1/runs',
    { projectSlug: 'observed', suiteSlug: 'mixed' },
    { 'x-request-id': requestId, 'idempotency-key': 'metrics-once' },
  );
  expect(created.status).toBe(201);
  const { suiteRunId } = (await created.json()) as { suiteRunId: string };
  await suiteRunDone(suiteRunId);
  const replay = await post(
    '/api/v1/runs',
    { projectSlug: 'observed', suiteSlug: 'mixed' },
    { 'idempotency-key': 'metrics-once' },
  );
  expect(replay.headers.get('idempotent-replayed')).toBe('true');
  const runs = await db.run.findMany({ where: { suiteRunId }, select: { id: true, testId: true, status: true } });
  expect(runs.map((r) => [r.testId, r.status]).sort()).toEqual(
    [
      [testIds.pass, 'passed'],
      [testIds.fail, 'failed'],
    ].sort(),
  );
  const runRead = await fetch(`${apiUrl}/api/v1/runs/${runs[0]?.id ?? ''}`, {
    headers: { authorization: `Bearer ${key}` },
  });
  expect(runRead.status).toBe(200);
  // Two bad keys from one address: the second is over RATE_LIMIT_UNAUTHENTICATED_PER_MINUTE=1.
  for (let i = 0; i < 2; i++) await fetch(`${apiUrl}/api/v1/runs/r`, { headers: { authorization: 'Bearer nope' } });

  const apiAfter = await scrape(apiMetricsUrl);
  const delta = (name: string, labels: Record<string, string>) =>
    sampleSum(apiAfter.samples, name, labels) - sampleSum(apiBefore.samples, name, labels);
  const count = 'testrun_api_request_duration_seconds_count';
  expect(delta(count, { route: '/api/v1/runs', method: 'POST', status: '201' })).toBe(2);
  expect(delta(count, { route: '/api/v1/runs/:runId', method: 'GET', status: '200' })).toBe(1);
  expect(delta(count, { route: '/api/v1/runs/*', method: 'GET', status: '401' })).toBe(1);
  expect(delta('testrun_api_idempotency_replays_total', { status: '201' })).toBe(1);
  expect(delta('testrun_api_rate_limit_refusals_total', { scope: 'address' })).toBe(1);
  const apiLabels = labelValues(apiAfter.samples).join(' ');
  for (const secret of [workspaceId, key, suiteRunId, ...runs.map((r) => r.id)])
    expect(apiLabels).not.toContain(secret);

  const workerAfter = await scrape(`${workerUrl}/metrics`);
  const workerDelta = (name: string, labels: Record<string, string>) =>
    sampleSum(workerAfter.samples, name, labels) - sampleSum(workerBefore.samples, name, labels);
  expect(workerDelta('testrun_worker_runs_finished_total', { status: 'passed', code: 'none' })).toBe(1);
  expect(workerDelta('testrun_worker_runs_finished_total', { status: 'failed' })).toBe(1);
  expect(workerDelta('testrun_worker_run_duration_seconds_count', { status: 'passed' })).toBe(1);
  expect(workerDelta('testrun_worker_run_duration_seconds_count', { status: 'failed' })).toBe(1);
  expect(sampleSum(workerAfter.samples, 'testrun_worker_browser_contexts')).toBe(0);
  expect(sampleSum(workerAfter.samples, 'testrun_queue_jobs', { state: 'active' })).toBe(0);
  expect(
    workerAfter.samples
      .filter((s) => s.name === 'testrun_queue_jobs')
      .map((s) => s.labels.state)
      .sort(),
  ).toEqual(['active', 'delayed', 'prioritized', 'waiting']);
  const workerLabels = labelValues(workerAfter.samples).join(' ');
  for (const secret of [workspaceId, suiteRunId, ...runs.map((r) => r.id)]) expect(workerLabels).not.toContain(secret);

  // One id follows the request to every run it created: on the rows and on the worker's lines.
  const rows = await db.run.findMany({ where: { suiteRunId }, select: { id: true, requestId: true } });
  expect(rows.map((r) => r.requestId)).toEqual([requestId, requestId]);
  const lines = worker
    .output()
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as { message?: string; runId?: string; requestId?: string });
  for (const run of rows) {
    const ofRun = lines.filter((l) => l.runId === run.id);
    expect(ofRun.map((l) => l.message)).toEqual(expect.arrayContaining(['run started', 'run finished']));
    expect(ofRun.every((l) => l.requestId === requestId)).toBe(true);
  }
});

it('the worker answers its probes, and readiness turns 503 when its Redis goes away', async () => {
  expect((await fetch(`${workerUrl}/healthz`)).status).toBe(200);
  const ready = await fetch(`${workerUrl}/readyz`);
  expect({ status: ready.status, body: (await ready.json()) as unknown }).toEqual({
    status: 200,
    body: { status: 'ready', draining: false, checks: { postgres: 'ok', redis: 'ok' } },
  });
  expect((await fetch(`${workerUrl}/nope`)).status).toBe(404);
  expect((await fetch(`${workerUrl}/healthz`, { method: 'POST' })).status).toBe(405);

  const redisPort = await freePort();
  const redis = await startRedis(redisPort);
  children.push(redis);
  const workerPort = await freePort();
  const alone = start('worker', {
    ...WORKER_ENV,
    WORKER_HTTP_PORT: String(workerPort),
    REDIS_URL: `redis://127.0.0.1:${redisPort}`,
    // Its reconciler would hand other tests' queued runs to this private queue.
    RECONCILE_INTERVAL_MS: '3600000',
  });
  await waitForLog(alone, 'worker ready');
  const url = `http://127.0.0.1:${workerPort}`;
  expect((await fetch(`${url}/readyz`)).status).toBe(200);
  await stopProcess(redis, 'SIGKILL');
  const notReady = await waitUntil(async () => {
    const res = await fetch(`${url}/readyz`);
    return res.status === 503 ? ((await res.json()) as unknown) : undefined;
  });
  expect(notReady).toEqual({
    status: 'not_ready',
    draining: false,
    checks: { postgres: 'ok', redis: 'unreachable' },
  });
  // Liveness is not readiness: the process and its browser still answer.
  expect((await fetch(`${url}/healthz`)).status).toBe(200);
  // The queue cannot be counted without Redis: no figure rather than a stale one.
  const scraped = await scrape(`${url}/metrics`);
  expect(scraped.samples.filter((s) => s.name === 'testrun_queue_jobs')).toEqual([]);
});
