import type { ChildProcess } from 'node:child_process';
import { Redis } from 'ioredis';
import { applyProject } from '../../packages/admin/src/operations';
import type { Db } from '@testrun/core/db';
import { startFixtureSite, type FixtureSite } from '../fixtures/site';
import { CHAOS_WORKER_ENV, expectSuiteConsistent, steadyProject } from './steady-suite';
import { createTenant, testDb } from '../support/harness';
import { present } from '../support/present';
import { startRedis } from '../support/processes';
import { apiClient, freePort, spawnService, startApi, waitForLog, waitUntil } from '../e2e/support';

/**
 * Faults in the middle of a suite, on a PRIVATE Redis started here on its own port (never the
 * machine's shared one): a worker killed with SIGKILL while it runs tests, then Redis flushed while
 * runs are queued and running (one taken over from the killed worker among them). Afterwards every
 * run is terminal exactly once, the suite's counters equal its children, and nothing is lost.
 */
jest.setTimeout(180_000);

const TESTS = 6;

let db: Db;
let site: FixtureSite;
let redis: ChildProcess | null = null;
const children: ChildProcess[] = [];

function startWorker(redisUrl: string, concurrency = CHAOS_WORKER_ENV.WORKER_CONCURRENCY) {
  const proc = spawnService('worker', { ...CHAOS_WORKER_ENV, REDIS_URL: redisUrl, WORKER_CONCURRENCY: concurrency });
  children.push(proc.child);
  return proc;
}

beforeAll(async () => {
  db = testDb();
  site = await startFixtureSite();
});

afterAll(async () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await site.close();
  await db.$disconnect();
});

it('a worker killed mid-suite and Redis flushed mid-suite lose no run and count each once', async () => {
  const port = await freePort();
  redis = await startRedis(port);
  children.push(redis);
  const redisUrl = `redis://127.0.0.1:${port}`;
  const api = await startApi({ REDIS_URL: redisUrl });
  const tenant = await createTenant(db);
  // Each test busy for longer than a worker takes to see a job given again after the flush.
  await applyProject(db, tenant.workspace.id, steadyProject(site.url, TESTS, 6_000));
  const client = apiClient(api.url, tenant.key);
  const suiteRunId = await client.createSuiteRun({ projectSlug: 'chaos', suiteSlug: 'steady' });
  const running = () => db.run.count({ where: { suiteRunId, status: 'running' } });

  // Fault 1: the first worker dies with SIGKILL while it runs tests.
  const first = startWorker(redisUrl);
  await waitForLog(first, 'worker ready');
  await waitUntil(async () => (await running()) > 0, 100);
  first.child.kill('SIGKILL');
  await first.exited;
  const heldByFirst = (await db.run.findMany({ where: { suiteRunId, status: 'running' }, select: { id: true } }))
    .map((r) => r.id)
    .sort();

  // Fault 2: a second worker takes over; Redis loses every job while runs are queued and running,
  // one of them a run the killed worker held, now on its last attempt: the second worker still runs
  // it (and holds it in Postgres), so it must not be taken over, which would end it worker_lost.
  // It has a slot for every test, so a job given again to a run it runs would be claimed at once.
  const second = startWorker(redisUrl, String(TESTS));
  await waitForLog(second, 'worker ready');
  await waitUntil(
    async () => (await db.run.count({ where: { suiteRunId, status: 'running', attempt: { gte: 2 } } })) > 0,
    100,
  );
  const flusher = new Redis(redisUrl);
  await flusher.flushall();
  flusher.disconnect();

  const suiteRun = await client.waitSuiteRun(suiteRunId);
  second.child.kill('SIGTERM');
  await second.exited;
  await api.close();

  const runs = await expectSuiteConsistent(db, suiteRun, TESTS);
  // The runs the killed worker held were not lost, nor the ones whose jobs Redis lost: all passed.
  expect(runs.filter((r) => r.status !== 'passed')).toEqual([]);
  // Only those the killed worker held took a second attempt: no run the second worker held was taken over.
  expect(
    runs
      .filter((r) => r.attempt > 1)
      .map((r) => r.id)
      .sort(),
  ).toEqual(heldByFirst);
  present(redis, 'the private Redis').kill('SIGKILL');
});
