import { applyProject } from '../../packages/admin/src/operations';
import type { Db } from '@testrun/core/db';
import type { SuiteRun } from '@testrun/contracts';
import { readWorkerConfig } from '../../apps/worker/src/config';
import { startWorkerService, type WorkerService } from '../../apps/worker/src/service/worker-service';
import { startFixtureSite, type FixtureSite } from '../fixtures/site';
import { createTenant, testDb } from '../support/harness';
import { apiClient, memoryLogger, startApi, waitUntil } from './support';

/**
 * Cancel and rerun end to end: the API and a worker (real Chromium, concurrency 2) in this process,
 * over HTTP. Outcomes are asserted after a generous wait; how fast a cancel lands is measured by
 * `pnpm bench cancel`, not here.
 */
jest.setTimeout(120_000);

let db: Db;
let site: FixtureSite;
let api: Awaited<ReturnType<typeof startApi>>;
let worker: WorkerService;
let workerLog: () => string;
let client: ReturnType<typeof apiClient>;
let key: string;

beforeAll(async () => {
  db = testDb();
  site = await startFixtureSite();
  api = await startApi();
  const mem = memoryLogger('worker');
  workerLog = mem.text;
  worker = await startWorkerService(readWorkerConfig({ ...process.env, WORKER_CONCURRENCY: '2' }), {
    logger: mem.logger,
    reconcile: false,
  });
  const tenant = await createTenant(db);
  key = tenant.key;
  client = apiClient(api.url, key);
  // A page that answers after a minute, and a wait: both hold a run well past any test's patience.
  const slow = (n: number) => ({
    key: `slow-${n}`,
    name: `Slow ${n}`,
    timeoutMs: 120_000,
    steps:
      n % 2 === 0
        ? [{ action: 'goto' as const, url: '/slow?ms=90000', timeoutMs: 60_000 }]
        : [
            { action: 'goto' as const, url: '/' },
            { action: 'wait' as const, ms: 30_000 },
            { action: 'wait' as const, ms: 30_000 },
          ],
  });
  await applyProject(db, tenant.workspace.id, {
    slug: 'lifecycle',
    name: 'Lifecycle',
    baseUrl: site.url,
    suites: [
      { slug: 'slow', name: 'Slow', tests: [1, 2, 3, 4, 5].map(slow) },
      {
        slug: 'mixed',
        name: 'Mixed',
        tests: [
          { key: 'pass', name: 'Passes', steps: [{ action: 'goto', url: '/' }] },
          {
            key: 'fail',
            name: 'Fails',
            steps: [
              { action: 'goto', url: '/' },
              { action: 'expectText', selector: 'h1', text: 'Not the heading', timeoutMs: 500 },
            ],
          },
          { key: 'error', name: 'Errors', steps: [{ action: 'goto', url: 'http://127.0.0.1:2/' }] },
          { key: 'off', name: 'Disabled', enabled: false, steps: [{ action: 'goto', url: '/' }] },
        ],
      },
    ],
  });
});

afterAll(async () => {
  await worker.stop();
  await api.close();
  await site.close();
  await db.$disconnect();
});

async function post(path: string, body?: unknown): Promise<{ status: number; body: unknown }> {
  const res = await fetch(`${api.url}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  return { status: res.status, body: (await res.json()) as unknown };
}

function expectExactCounters(s: SuiteRun): void {
  const count = (status: string) => s.tests.filter((t) => t.status === status).length;
  expect(s.total_count).toBe(s.tests.length);
  expect([s.passed_count, s.failed_count, s.error_count, s.skipped_count]).toEqual(
    ['passed', 'failed', 'error', 'skipped'].map(count),
  );
}

it('cancelling a suite with queued and running children ends every child, counters exact', async () => {
  const id = await client.createSuiteRun({
    projectSlug: 'lifecycle',
    suiteSlug: 'slow',
    headers: { 'X-Preview': 'cancel-me' },
  });
  // Two children running (the worker's concurrency), three queued behind them.
  await waitUntil(async () => {
    const s = await client.getSuiteRun(id);
    return s.tests.filter((t) => t.status === 'running').length === 2;
  });
  // Let the running steps get under way (a navigation that waits, a wait).
  await waitUntil(() => Promise.resolve(workerLog().split('"message":"run started"').length - 1 >= 2));

  const res = await post(`/api/v1/suite-runs/${id}/cancel`);
  expect(res.status).toBe(202);
  const ended = await client.waitSuiteRun(id);
  expect(ended.tests.map((t) => t.status).sort()).toEqual(['error', 'error', 'skipped', 'skipped', 'skipped']);
  for (const entry of ended.tests) {
    if (entry.status === 'skipped') expect(entry.skipReason).toBe('cancelled');
    else expect((await client.getRun(entry.runId)).error).toMatchObject({ code: 'cancelled' });
  }
  expect(ended).toMatchObject({ status: 'error', error_count: 2, skipped_count: 3, passed_count: 0, failed_count: 0 });
  expectExactCounters(ended);
  expect(workerLog()).toContain('run cancel received');
  // Nothing sealed stays on the runs.
  const sealed = await db.run.count({ where: { suiteRunId: id, NOT: { headersSealed: null } } });
  expect(sealed).toBe(0);

  // A second cancel of the finished suite run changes nothing.
  const again = await post(`/api/v1/suite-runs/${id}/cancel`);
  expect(again.status).toBe(202);
  expect(await client.getSuiteRun(id)).toEqual(ended);
});

it('a rerun of a mixed suite runs exactly its failed and error tests, with the original headers', async () => {
  const original = await client.createSuiteRun({
    projectSlug: 'lifecycle',
    suiteSlug: 'mixed',
    headers: { 'X-Rerun-Check': 'sealed-value' },
  });
  const first = await client.waitSuiteRun(original);
  expect(first.tests.map((t) => [t.name, t.status])).toEqual([
    ['Passes', 'passed'],
    ['Fails', 'failed'],
    ['Errors', 'error'],
    ['Disabled', 'skipped'],
  ]);
  const before = site.received.length;

  const res = await post(`/api/v1/suite-runs/${original}/rerun`, { only: 'failed' });
  expect(res.status).toBe(201);
  const { suiteRunId } = res.body as { suiteRunId: string };
  const rerun = await client.waitSuiteRun(suiteRunId);
  expect(rerun.rerun_of).toBe(original);
  expect(rerun.tests.map((t) => [t.name, t.status])).toEqual([
    ['Fails', 'failed'],
    ['Errors', 'error'],
  ]);
  expectExactCounters(rerun);
  // The rerun's page loads carried the original's header, from the suite run's sealed copy.
  const loads = site.received.slice(before).filter((r) => r.path === '/');
  expect(loads.length).toBeGreaterThan(0);
  expect(loads.every((r) => r.headers['x-rerun-check'] === 'sealed-value')).toBe(true);
});
