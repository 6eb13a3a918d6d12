import { applyProject } from '../../packages/admin/src/operations';
import { createPrisma, type Db } from '@testrun/core/db';
import { ensureDatabase, migrateDatabase } from '@testrun/core/migrate';
import { startFixtureSite, type FixtureSite } from '../fixtures/site';
import { createTenant } from '../support/harness';
import { apiClient, spawnService, startApi, waitForLog, waitUntil } from '../e2e/support';
import { startPrivatePostgres, type PrivatePostgres } from './private-postgres';
import { CHAOS_WORKER_ENV, expectSuiteConsistent, steadyProject } from './steady-suite';

/**
 * A Postgres outage four times longer than WORKER_LOCK_DURATION_MS, on a PRIVATE cluster, while a
 * suite's runs execute. The workers stay alive and their locks (in Redis) stay renewed, so no run is
 * `worker_lost`: with the default WORKER_WRITE_RETRY_MS the runs keep their true verdict; with one
 * shorter than the outage the runs their worker gave up say the database was unavailable.
 */
jest.setTimeout(240_000);

const TESTS = 2;
const OUTAGE_MS = 8_000; // 4 × WORKER_LOCK_DURATION_MS of CHAOS_WORKER_ENV
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

/** Runs the steady suite on a fresh database, stops Postgres for OUTAGE_MS while its runs execute; returns its runs. */
async function suiteThroughOutage(database: string, workerEnv: Record<string, string>) {
  const databaseUrl = cluster.url(database);
  await ensureDatabase(databaseUrl);
  await migrateDatabase(databaseUrl);
  const db: Db = createPrisma({ databaseUrl, max: 2 });
  const api = await startApi({ DATABASE_URL: databaseUrl });
  const worker = spawnService('worker', { ...CHAOS_WORKER_ENV, ...workerEnv, DATABASE_URL: databaseUrl });
  try {
    await waitForLog(worker, 'worker ready');
    const tenant = await createTenant(db);
    await applyProject(db, tenant.workspace.id, steadyProject(site.url, TESTS));
    const client = apiClient(api.url, tenant.key);
    const suiteRunId = await client.createSuiteRun({ projectSlug: 'chaos', suiteSlug: 'steady' });
    await waitUntil(async () => (await db.run.count({ where: { suiteRunId, status: 'running' } })) === TESTS, 50);

    cluster.stop();
    await new Promise((resolve) => setTimeout(resolve, OUTAGE_MS));
    cluster.start();

    const runs = await expectSuiteConsistent(db, await client.waitSuiteRun(suiteRunId), TESTS);
    const codes = await db.run.findMany({ where: { suiteRunId }, select: { outcomeCode: true } });
    return { runs, codes: codes.map((r) => r.outcomeCode) };
  } finally {
    worker.child.kill('SIGTERM');
    await worker.exited;
    await api.close();
    await db.$disconnect();
  }
}

it('runs executing through an outage longer than the job lock keep their verdict; none is worker_lost', async () => {
  const { runs, codes } = await suiteThroughOutage('testrun_outage_kept', {});
  expect(codes).not.toContain('worker_lost');
  expect(runs.map((r) => `${r.status}: ${r.resultSummary}`)).toEqual(
    Array(TESTS).fill(expect.stringMatching(/^passed: /)),
  );
});

it('a run its worker gave up recording says the database was unavailable, not that a worker was lost', async () => {
  const { runs, codes } = await suiteThroughOutage('testrun_outage_given_up', { WORKER_WRITE_RETRY_MS: '1000' });
  expect(codes).not.toContain('worker_lost');
  expect(codes).toEqual(Array(TESTS).fill('internal_error'));
  for (const run of runs)
    expect(`${run.status}: ${run.resultSummary}`).toBe(
      "error: Error: the run's outcome could not be recorded: the database was unavailable.",
    );
});
