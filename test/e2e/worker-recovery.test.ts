import type { ChildProcess } from 'node:child_process';
import { Redis } from 'ioredis';
import { applyProject, type AppliedProject } from '../../packages/admin/src/operations';
import type { Db } from '@testrun/core/db';
import { createTenant, testDb } from '../support/harness';
import { present } from '../support/present';
import { startRedis } from '../support/processes';
import { startFixtureSite, type FixtureSite } from '../fixtures/site';
import { apiClient, freePort, spawnService, startApi, waitForLog, waitUntil } from './support';

/**
 * Nothing lost, nothing stuck: real worker processes killed with SIGKILL, drained with SIGTERM, and
 * a Redis that loses every job. Lock and stall intervals are shortened through the environment
 * (WORKER_LOCK_DURATION_MS, WORKER_STALLED_INTERVAL_MS) so a dead worker is noticed in seconds.
 */
jest.setTimeout(120_000);

const WORKER_ENV = {
  WORKER_CONCURRENCY: '2',
  WORKER_LOCK_DURATION_MS: '2000',
  WORKER_STALLED_INTERVAL_MS: '1000',
  RECONCILE_INTERVAL_MS: '1000',
  WORKER_VIDEO: 'off',
  LOG_LEVEL: 'info',
};

let db: Db;
let site: FixtureSite;
let api: Awaited<ReturnType<typeof startApi>>;
let client: ReturnType<typeof apiClient>;
let project: AppliedProject;
const children: ChildProcess[] = [];
let tenantKey = '';

function startWorker(env: Record<string, string> = {}) {
  const proc = spawnService('worker', { ...WORKER_ENV, ...env });
  children.push(proc.child);
  return proc;
}

async function runRow(id: string) {
  return db.run.findUniqueOrThrow({
    where: { id },
    select: { status: true, attempt: true, outcomeCode: true, resultSummary: true },
  });
}

function testId(key: string): string {
  return present(
    project.suites.flatMap((s) => s.tests).find((t) => t.key === key),
    `test ${key}`,
  ).id;
}

beforeAll(async () => {
  db = testDb();
  site = await startFixtureSite();
  api = await startApi();
  const tenant = await createTenant(db);
  tenantKey = tenant.key;
  client = apiClient(api.url, tenant.key);
  const home = [{ action: 'goto' as const, url: '/' }];
  project = await applyProject(db, tenant.workspace.id, {
    slug: 'recovery',
    name: 'Recovery',
    baseUrl: site.url,
    suites: [
      {
        slug: 'long',
        name: 'Long',
        tests: [
          {
            key: 'slow-pass',
            name: 'Passes after 3 s',
            steps: [
              ...home,
              { action: 'wait', ms: 3_000 },
              { action: 'expectText', selector: 'h1', text: 'Testrun Shop' },
            ],
          },
          { key: 'very-slow', name: 'Takes 20 s', steps: [...home, { action: 'wait', ms: 20_000 }] },
        ],
      },
      {
        slug: 'quick',
        name: 'Quick',
        tests: [
          {
            key: 'q1',
            name: 'Quick 1',
            steps: [...home, { action: 'expectText', selector: 'h1', text: 'Testrun Shop' }],
          },
          { key: 'q2', name: 'Quick 2', steps: [...home, { action: 'expectTitle', title: 'Testrun Shop' }] },
        ],
      },
    ],
  });
});

afterAll(async () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await api.close();
  await site.close();
  await db.$disconnect();
});

describe('a worker killed mid-run', () => {
  it('is replaced by another worker once; a run whose worker dies twice ends worker_lost; each is counted once', async () => {
    const suiteRunId = await client.createSuiteRun({ projectSlug: 'recovery', suiteSlug: 'long' });
    const runs = await db.run.findMany({ where: { suiteRunId }, orderBy: { position: 'asc' }, select: { id: true } });
    const slowPass = present(runs[0], 'the slow run').id;
    const verySlow = present(runs[1], 'the very slow run').id;

    const a = startWorker();
    await waitUntil(async () => {
      const rows = await Promise.all([runRow(slowPass), runRow(verySlow)]);
      return rows.every((r) => r.status === 'running' && r.attempt === 1);
    });
    a.child.kill('SIGKILL');
    await a.exited;

    const b = startWorker();
    // The second worker notices the expired locks and runs both again, as attempt 2.
    const passed = await waitUntil(async () => {
      const r = await runRow(slowPass);
      return r.status === 'passed' && r;
    });
    expect(passed.attempt).toBe(2);
    const steps = await db.stepResult.findMany({ where: { runId: slowPass, attempt: 2 }, orderBy: { index: 'asc' } });
    expect(steps.map((s) => s.outcome)).toEqual(['passed', 'passed', 'passed']);

    await waitUntil(async () => {
      const r = await runRow(verySlow);
      return r.status === 'running' && r.attempt === 2;
    });
    b.child.kill('SIGKILL');
    await b.exited;

    const c = startWorker();
    const lost = await waitUntil(async () => {
      const r = await runRow(verySlow);
      return r.status === 'error' && r;
    });
    expect(lost).toMatchObject({ outcomeCode: 'worker_lost', attempt: 2 });
    expect((await client.getRun(verySlow)).error).toMatchObject({ code: 'worker_lost' });

    const suiteRun = await client.waitSuiteRun(suiteRunId);
    expect(suiteRun).toMatchObject({
      status: 'error',
      total_count: 2,
      passed_count: 1,
      failed_count: 0,
      error_count: 1,
      skipped_count: 0,
    });
    const counters = await db.suiteRun.findUniqueOrThrow({ where: { id: suiteRunId } });
    expect([counters.queuedCount, counters.runningCount]).toEqual([0, 0]);

    // SIGTERM while a run is under way: the run finishes on this worker, then the process exits 0.
    const runId = await client.createRun({ testId: testId('slow-pass') });
    await waitUntil(async () => (await runRow(runId)).status === 'running');
    c.child.kill('SIGTERM');
    expect(await c.exited).toBe(0);
    const drained = await runRow(runId);
    expect(drained.resultSummary).toMatch(/^Passed/);
    expect(drained).toMatchObject({ status: 'passed', attempt: 1 });
  });
});

describe('Redis losing every job', () => {
  let redis: ChildProcess | null = null;
  let port: number;

  async function restartRedis(): Promise<void> {
    redis = await startRedis(port);
    children.push(redis);
  }

  afterAll(() => {
    redis?.kill('SIGKILL');
  });

  it('still runs every queued run: the reconciler adds the lost jobs again', async () => {
    port = await freePort();
    await restartRedis();
    const redisUrl = `redis://127.0.0.1:${port}`;
    const privateApi = await startApi({ REDIS_URL: redisUrl });
    const privateClient = apiClient(privateApi.url, tenantKey);
    const suiteRunId = await privateClient.createSuiteRun({ projectSlug: 'recovery', suiteSlug: 'quick' });

    // Redis restarts empty: the jobs the API added are gone.
    const jobsBefore = await countKeys(redisUrl);
    expect(jobsBefore).toBeGreaterThan(0);
    const lost = present(redis, 'the private Redis');
    lost.kill('SIGKILL');
    await new Promise((resolve) => lost.once('exit', resolve));
    await restartRedis();
    expect(await countKeys(redisUrl)).toBe(0);

    const worker = startWorker({ REDIS_URL: redisUrl });
    await waitForLog(worker, 'worker ready');
    const suiteRun = await privateClient.waitSuiteRun(suiteRunId);
    expect(suiteRun).toMatchObject({ status: 'passed', passed_count: 2, total_count: 2 });
    worker.child.kill('SIGTERM');
    expect(await worker.exited).toBe(0);
    await privateApi.close();
  });
});

async function countKeys(url: string): Promise<number> {
  const r = new Redis(url, { maxRetriesPerRequest: 1 });
  try {
    return (await r.keys(`${process.env.REDIS_PREFIX}*`)).length;
  } finally {
    r.disconnect();
  }
}
