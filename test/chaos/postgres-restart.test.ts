import { applyProject } from '../../packages/admin/src/operations';
import { createPrisma, type Db } from '@testrun/core/db';
import { ensureDatabase, migrateDatabase } from '@testrun/core/migrate';
import { startFixtureSite, type FixtureSite } from '../fixtures/site';
import {
  expectRetryCreatesOnce,
  expectSuiteConsistent,
  expectUnavailable,
  postSteadySuite,
  steadyProject,
} from './steady-suite';
import { createTenant } from '../support/harness';
import { apiClient, spawnService, startApi, waitForLog, waitUntil } from '../e2e/support';
import { startPrivatePostgres, type PrivatePostgres } from './private-postgres';

/**
 * Postgres restarted under load, on a PRIVATE cluster this test creates (initdb) on its own port and
 * directory, never the machine's shared Postgres: while a suite's runs execute and while clients
 * enqueue. During the outage the API answers 503 with Retry-After; the worker retries its claims and
 * result writes; afterwards every run is terminal exactly once and `passed` (no verdict changed by
 * the outage), the counters equal the children, and each Idempotency-Key retried after the outage
 * created its runs once.
 */
jest.setTimeout(240_000);

const TESTS = 4;
let cluster: PrivatePostgres;
let site: FixtureSite;

beforeAll(async () => {
  cluster = await startPrivatePostgres();
  site = await startFixtureSite();
});

afterAll(async () => {
  cluster.close();
  await site.close();
});

it('a Postgres restart during result writes and during enqueue loses no run and creates none twice', async () => {
  const databaseUrl = cluster.url('testrun_chaos');
  await ensureDatabase(databaseUrl);
  await migrateDatabase(databaseUrl);
  const db: Db = createPrisma({ databaseUrl, max: 2 });
  const api = await startApi({ DATABASE_URL: databaseUrl });
  const worker = spawnService('worker', {
    DATABASE_URL: databaseUrl,
    WORKER_CONCURRENCY: '2',
    WORKER_LOCK_DURATION_MS: '20000',
    RECONCILE_INTERVAL_MS: '1000',
    WORKER_VIDEO: 'off',
    LOG_LEVEL: 'info',
  });
  try {
    await waitForLog(worker, 'worker ready');
    const tenant = await createTenant(db);
    await applyProject(db, tenant.workspace.id, steadyProject(site.url, TESTS));
    const client = apiClient(api.url, tenant.key);
    const suiteRunId = await client.createSuiteRun({ projectSlug: 'chaos', suiteSlug: 'steady' });
    await waitUntil(async () => (await db.run.count({ where: { suiteRunId, status: 'running' } })) > 0, 100);

    // The outage: runs are executing; clients keep enqueueing with their Idempotency-Keys.
    cluster.stop();
    const post = (key: string) => postSteadySuite(api.url, tenant.key, key);
    expectUnavailable(await post('chaos-during-outage'));
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    cluster.start();

    // The API recovers by itself; the client's retry with the same key creates the suite run once.
    const second = await expectRetryCreatesOnce(() => post('chaos-during-outage'));

    for (const id of [suiteRunId, second]) {
      const runs = await expectSuiteConsistent(db, await client.waitSuiteRun(id), TESTS);
      // No verdict changed by the outage: the claims and result writes that hit it were retried.
      expect(runs.filter((r) => r.status !== 'passed')).toEqual([]);
    }
    // Exactly the two suite runs: the one before the outage and the one the retried key created.
    expect(await db.suiteRun.count({ where: { workspaceId: tenant.workspace.id } })).toBe(2);
  } finally {
    worker.child.kill('SIGTERM');
    await worker.exited;
    await api.close();
    await db.$disconnect();
  }
});
