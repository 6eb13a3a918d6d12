import { writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { applyProject } from '../../packages/admin/src/operations';
import type { Db } from '@testrun/core/db';
import type { Run } from '@testrun/contracts';
import { createTenant, testDb } from '../support/harness';
import { stopProcess } from '../support/processes';
import { startChurnSite, type ChurnSite } from './churn-site';
import { apiClient, spawnService, startApi, waitForLog, waitUntil } from './support';

/**
 * A tenant cancelling its own runs while their pages navigate, redirect and load (a worker
 * process, real Chromium, the API over HTTP): each run is cancelled a seeded-random 0–900 ms after
 * it starts running, so cancels land in every phase of a run (context set-up, trace start, a
 * navigation, a screenshot, the teardown). Every cancelled run must end `cancelled`, and the worker
 * must live through all of it and still pass a plain run afterwards.
 *
 * CANCEL_STORM_RUNS (default 32) and CANCEL_STORM_SEED (default 1) change the storm.
 */
jest.setTimeout(300_000);

const RUNS = Number(process.env.CANCEL_STORM_RUNS ?? 32);
const SEED = Number(process.env.CANCEL_STORM_SEED ?? 1);
/** Runs cancelled at once: the worker's concurrency. */
const LANES = Number(process.env.CANCEL_STORM_LANES ?? 2);

let db: Db;
let site: ChurnSite;
let api: Awaited<ReturnType<typeof startApi>>;
let worker: ReturnType<typeof spawnService>;
let client: ReturnType<typeof apiClient>;
let key: string;
let testIds: Record<'storm' | 'plain', string>;

/** mulberry32: a small seeded generator, so a storm can be replayed. */
function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

beforeAll(async () => {
  db = testDb();
  site = await startChurnSite();
  api = await startApi();
  worker = spawnService('worker', { WORKER_CONCURRENCY: String(LANES), WORKER_VIDEO: 'off', LOG_LEVEL: 'info' });
  const tenant = await createTenant(db);
  key = tenant.key;
  client = apiClient(api.url, key);
  await applyProject(db, tenant.workspace.id, {
    slug: 'storm',
    name: 'Storm',
    baseUrl: site.url,
    // Traces and screenshots of every step: a cancel also lands while they are taken.
    evidence: { trace: 'on', screenshots: 'on', video: 'off' },
    suites: [
      {
        slug: 'storm',
        name: 'Storm',
        tests: [
          {
            key: 'storm',
            name: 'Navigates without end',
            timeoutMs: 120_000,
            steps: [
              { action: 'goto', url: '/hop?n=3' },
              { action: 'goto', url: '/churn' },
              { action: 'expectText', selector: 'h1', text: 'Churn' },
              { action: 'goto', url: '/slow?ms=2000' },
              { action: 'goto', url: '/churn?r=2' },
              { action: 'wait', ms: 30_000 },
            ],
          },
          { key: 'plain', name: 'Plain', steps: [{ action: 'goto', url: '/churn?r=6' }] },
        ],
      },
    ],
  });
  const ids = await db.test.findMany({ where: { workspaceId: tenant.workspace.id }, select: { id: true, key: true } });
  const id = (k: string) => ids.find((t) => t.key === k)?.id ?? '';
  testIds = { storm: id('storm'), plain: id('plain') };
  await waitForLog(worker, 'worker ready');
});

afterAll(async () => {
  if (process.env.CANCEL_STORM_LOG) writeFileSync(process.env.CANCEL_STORM_LOG, worker.output());
  await stopProcess(worker.child, 'SIGTERM');
  await api.close();
  await site.close();
  await db.$disconnect();
});

/** Fails at once when the worker process is gone: nothing else would end its runs. */
function workerAlive(): void {
  if (worker.child.exitCode !== null || worker.child.signalCode !== null)
    throw new Error(`the worker exited (${worker.child.exitCode ?? worker.child.signalCode}):\n${worker.output()}`);
}

async function untilEnded(runId: string): Promise<Run> {
  return waitUntil(async () => {
    workerAlive();
    const run = await client.getRun(runId);
    return run.status !== 'queued' && run.status !== 'running' && run;
  }, 100);
}

/** Starts a run, cancels it `delayMs` after it is running, and returns how it ended. */
async function cancelledRun(delayMs: number): Promise<Run> {
  // With headers the worker routes the site's requests through its own fetch (target-headers.ts).
  const runId = await client.createRun({ testId: testIds.storm, headers: { 'X-Storm': 'on' } });
  await waitUntil(async () => {
    workerAlive();
    const row = await db.run.findUniqueOrThrow({ where: { id: runId }, select: { status: true } });
    return row.status !== 'queued';
  }, 20);
  await sleep(delayMs);
  const res = await fetch(`${api.url}/api/v1/runs/${runId}/cancel`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}` },
  });
  expect(res.status).toBe(202);
  return untilEnded(runId);
}

it(`${RUNS} runs cancelled while they navigate all end cancelled, and the worker lives on`, async () => {
  const pid = worker.child.pid;
  const random = seeded(SEED);
  const delays = Array.from({ length: RUNS }, () => Math.floor(random() * 900));
  const ended: Run[] = [];
  await Promise.all(
    Array.from({ length: LANES }, async (_, lane) => {
      for (let i = lane; i < RUNS; i += LANES) ended.push(await cancelledRun(delays[i] ?? 0));
    }),
  );
  const outcomes = ended.map((run) => `${run.status}/${run.error?.code ?? '-'}`);
  expect(outcomes).toEqual(ended.map(() => 'error/cancelled'));
  workerAlive();
  expect(worker.child.pid).toBe(pid);
  // Nothing of a run failed inside the worker (on main: `tracing.start` under a context closed
  // mid set-up), and no fault reached the process's guard.
  expect(worker.output()).not.toMatch(/run failed inside the worker|fault of a run|fault outside any run/);
  expect(worker.output()).not.toMatch(/was not bound in the connection/);

  // The same worker still runs a run to the end.
  const plain = await untilEnded(await client.createRun({ testId: testIds.plain }));
  expect(plain.status).toBe('passed');
  expect(worker.child.pid).toBe(pid);
});
