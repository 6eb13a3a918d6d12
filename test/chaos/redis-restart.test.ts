import type { ChildProcess } from 'node:child_process';
import { applyProject } from '../../packages/admin/src/operations';
import type { Db } from '@testrun/core/db';
import { startFixtureSite, type FixtureSite } from '../fixtures/site';
import {
  CHAOS_WORKER_ENV,
  expectRetryCreatesOnce,
  expectSuiteConsistent,
  expectUnavailable,
  postSteadySuite,
  steadyProject,
} from './steady-suite';
import { createTenant, testDb } from '../support/harness';
import { startRedis, stopProcess } from '../support/processes';
import { apiClient, freePort, spawnService, startApi, waitForLog, waitUntil } from '../e2e/support';

/**
 * Redis restarted (stopped, down for 3 s, started again empty) while a suite's runs are queued and
 * running, on a PRIVATE redis-server started here on its own port (never the machine's shared one).
 * While it is down the API answers 503 with Retry-After and a problem document; it recovers by
 * itself, and a client's retry with its Idempotency-Key creates its suite run once. Afterwards every
 * run is terminal exactly once and `passed`, the counters equal the children, none lost; the worker
 * reported the outage in its JSON log only.
 */
jest.setTimeout(180_000);

const TESTS = 6;

let db: Db;
let site: FixtureSite;
const children: ChildProcess[] = [];

beforeAll(async () => {
  db = testDb();
  site = await startFixtureSite();
});

afterAll(async () => {
  for (const child of children) await stopProcess(child);
  await site.close();
  await db.$disconnect();
});

it('a Redis restart with runs queued and running loses no run, counts each once, and the API recovers by itself', async () => {
  const port = await freePort();
  children.push(await startRedis(port));
  const redisUrl = `redis://127.0.0.1:${port}`;
  const api = await startApi({ REDIS_URL: redisUrl });
  const worker = spawnService('worker', { ...CHAOS_WORKER_ENV, REDIS_URL: redisUrl });
  children.push(worker.child);
  try {
    await waitForLog(worker, 'worker ready');
    const tenant = await createTenant(db);
    await applyProject(db, tenant.workspace.id, steadyProject(site.url, TESTS));
    const client = apiClient(api.url, tenant.key);
    const suiteRunId = await client.createSuiteRun({ projectSlug: 'chaos', suiteSlug: 'steady' });
    await waitUntil(async () => (await db.run.count({ where: { suiteRunId, status: 'running' } })) > 0, 100);

    // The restart: Redis goes away with every job, lock and counter, while runs execute.
    const redis = children.shift();
    if (redis) await stopProcess(redis, 'SIGTERM');
    const post = (key: string) => postSteadySuite(api.url, tenant.key, key);
    expectUnavailable(await post('chaos-redis-outage'));
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    children.push(await startRedis(port));

    // The API recovers by itself; the client's retry with the same key creates the suite run once.
    const second = await expectRetryCreatesOnce(() => post('chaos-redis-outage'));

    for (const id of [suiteRunId, second]) {
      const runs = await expectSuiteConsistent(db, await client.waitSuiteRun(id), TESTS);
      expect(runs.filter((r) => r.status !== 'passed')).toEqual([]);
    }
    expect(await db.suiteRun.count({ where: { workspaceId: tenant.workspace.id } })).toBe(2);
    // The outage is reported in the worker's JSON log, not as stack traces printed beside it.
    const unstructured = worker
      .output()
      .split('\n')
      .filter((line) => line.trim() !== '' && !line.startsWith('{'));
    expect(unstructured).toEqual([]);
  } finally {
    await stopProcess(worker.child, 'SIGTERM');
    await api.close();
  }
});
