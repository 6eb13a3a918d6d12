import path from 'node:path';
import { applyProject } from '../../packages/admin/src/operations';
import type { Db } from '@testrun/core/db';
import type { Run, Step } from '@testrun/contracts';
import { createTenant, testDb } from '../support/harness';
import { stopProcess } from '../support/processes';
import { startChurnSite, type ChurnSite } from './churn-site';
import { apiClient, spawnService, startApi, waitForLog, waitUntil } from './support';

/**
 * The worker's fault guard (fault-guard.ts), in a worker process with real Chromium: a fault no
 * caller catches, raised inside a run (test/support/inject-faults.cjs makes a run's `goto` raise
 * one), ends that run `internal_error` and the process serves on; one raised outside every run
 * makes the process drain like SIGTERM (the run under way still finishes) and exit 70.
 */
jest.setTimeout(180_000);

let db: Db;
let site: ChurnSite;
let api: Awaited<ReturnType<typeof startApi>>;
let worker: ReturnType<typeof spawnService>;
let client: ReturnType<typeof apiClient>;
let ids: Record<string, string>;

beforeAll(async () => {
  db = testDb();
  site = await startChurnSite();
  api = await startApi();
  const preload = path.join(__dirname, '..', 'support', 'inject-faults.cjs');
  const before = process.env.TESTRUN_SERVICE_NODE_ARGS;
  process.env.TESTRUN_SERVICE_NODE_ARGS = `--require ${preload}`;
  try {
    worker = spawnService('worker', { WORKER_CONCURRENCY: '2', WORKER_VIDEO: 'off', LOG_LEVEL: 'info' });
  } finally {
    if (before === undefined) delete process.env.TESTRUN_SERVICE_NODE_ARGS;
    else process.env.TESTRUN_SERVICE_NODE_ARGS = before;
  }
  const tenant = await createTenant(db);
  client = apiClient(api.url, tenant.key);
  const test = (key: string, steps: Step[]) => ({ key, name: key, steps });
  await applyProject(db, tenant.workspace.id, {
    slug: 'faults',
    name: 'Faults',
    baseUrl: site.url,
    suites: [
      {
        slug: 'faults',
        name: 'Faults',
        tests: [
          test('run-fault', [
            { action: 'goto', url: '/slow?ms=300&fault=run' },
            { action: 'wait', ms: 5_000 },
          ]),
          test('process-fault', [{ action: 'goto', url: '/slow?ms=50&fault=process' }]),
          test('plain', [{ action: 'goto', url: '/churn?r=6' }]),
          test('long', [
            { action: 'goto', url: '/churn?r=6' },
            { action: 'wait', ms: 4_000 },
            { action: 'expectText', selector: 'h1', text: 'Churn' },
          ]),
        ],
      },
    ],
  });
  const rows = await db.test.findMany({ where: { workspaceId: tenant.workspace.id }, select: { id: true, key: true } });
  ids = Object.fromEntries(rows.map((t) => [t.key, t.id]));
  await waitForLog(worker, 'worker ready');
});

afterAll(async () => {
  await stopProcess(worker.child);
  await api.close();
  await site.close();
  await db.$disconnect();
});

async function ended(runId: string): Promise<Run> {
  return waitUntil(async () => {
    // Nothing else would end its runs.
    if (worker.child.exitCode !== null || worker.child.signalCode !== null)
      throw new Error(`the worker exited (${worker.child.exitCode ?? worker.child.signalCode}):\n${worker.output()}`);
    const run = await client.getRun(runId);
    return run.status !== 'queued' && run.status !== 'running' && run;
  }, 100);
}

it('a fault inside a run ends that run internal_error, and the process serves on', async () => {
  const pid = worker.child.pid;
  const faulty = await ended(await client.createRun({ testId: ids['run-fault'] ?? '' }));
  expect(faulty.status).toBe('error');
  expect(faulty.error).toMatchObject({ code: 'internal_error' });
  expect(faulty.error?.message).toContain('injected fault inside a run');
  expect(worker.output()).toContain('"message":"fault of a run caught: the run ends internal_error"');

  const plain = await ended(await client.createRun({ testId: ids.plain ?? '' }));
  expect(plain.status).toBe('passed');
  expect(worker.child.exitCode).toBeNull();
  expect(worker.child.pid).toBe(pid);
});

it('a fault outside every run drains the process, lets the run under way finish, and exits 70', async () => {
  const long = await client.createRun({ testId: ids.long ?? '' });
  await waitUntil(async () => (await client.getRun(long)).status === 'running');
  const faulty = await client.createRun({ testId: ids['process-fault'] ?? '' });
  expect(await worker.exited).toBe(70);
  const output = worker.output();
  expect(output).toContain('"message":"fault outside any run: the worker drains and exits"');
  expect(output).toContain('"message":"draining"');
  // The run under way when the fault came was not lost: it finished on this worker.
  expect((await client.getRun(long)).status).toBe('passed');
  expect((await client.getRun(faulty)).status).toBe('passed');
});
