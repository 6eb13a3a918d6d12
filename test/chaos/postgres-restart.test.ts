import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync } from 'node:fs';
import { readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { applyProject, createPrisma, ensureDatabase, migrateDatabase, type Db } from '@testrun/core';
import { startFixtureSite, type FixtureSite } from '../fixtures/site';
import {
  expectRetryCreatesOnce,
  expectSuiteConsistent,
  expectUnavailable,
  postSteadySuite,
  steadyProject,
} from './steady-suite';
import { createTenant } from '../support/harness';
import { apiClient, freePort, spawnService, startApi, waitForLog, waitUntil } from '../e2e/support';

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
const BIN = (() => {
  const versions = readdirSync('/usr/lib/postgresql').sort();
  const latest = versions[versions.length - 1];
  if (!latest) throw new Error('no Postgres server binaries under /usr/lib/postgresql');
  return path.join('/usr/lib/postgresql', latest, 'bin');
})();

/** Runs a Postgres binary as the postgres user when this process is root (the server refuses root). */
function pg(binary: string, args: string[]): void {
  const asRoot = process.getuid?.() === 0;
  const command = asRoot ? 'runuser' : path.join(BIN, binary);
  const argv = asRoot ? ['-u', 'postgres', '--', path.join(BIN, binary), ...args] : args;
  const result = spawnSync(command, argv, { encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`${binary} ${args.join(' ')} failed: ${result.stderr || result.stdout}`);
}

let dir: string;
let port: number;
let site: FixtureSite;
const stopCluster = () => pg('pg_ctl', ['-D', path.join(dir, 'data'), '-m', 'fast', '-w', 'stop']);
const startCluster = () =>
  pg('pg_ctl', [
    '-D',
    path.join(dir, 'data'),
    '-w',
    '-l',
    path.join(dir, 'server.log'),
    '-o',
    `-p ${port} -c listen_addresses=127.0.0.1 -k ${dir}`,
    'start',
  ]);

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'testrun-chaos-pg-'));
  chmodSync(dir, 0o777);
  port = await freePort();
  pg('initdb', ['-D', path.join(dir, 'data'), '-A', 'trust', '-U', 'postgres', '--no-sync']);
  startCluster();
  site = await startFixtureSite();
});

afterAll(async () => {
  try {
    stopCluster();
  } catch {
    // already stopped by a failed test
  }
  await site.close();
  rmSync(dir, { recursive: true, force: true });
});

it('a Postgres restart during result writes and during enqueue loses no run and creates none twice', async () => {
  const databaseUrl = `postgresql://postgres@127.0.0.1:${port}/testrun_chaos`;
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
    stopCluster();
    const post = (key: string) => postSteadySuite(api.url, tenant.key, key);
    expectUnavailable(await post('chaos-during-outage'));
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    startCluster();

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
