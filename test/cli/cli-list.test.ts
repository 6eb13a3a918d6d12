/**
 * `testrun projects`, `testrun runs` and `testrun suite-runs`: the binary against a real API process
 * (real Postgres and Redis). No worker: the runs are created the way the API records them and ended
 * through core's state machine.
 */
import type { Db } from '@testrun/core/db';
import { finishRun, startRun } from '@testrun/core/runs';
import type { ProjectList, RunList, SuiteRunList } from '@testrun/contracts';
import { nth } from '../api/typed';
import { applySampleProject, createTenant, insertSuiteRuns, sampleProject, testDb } from '../support/harness';
import { freePort, runCli, startService, waitReady, type ServiceProcess } from './cli-harness';

jest.setTimeout(90_000);

let db: Db;
let api: ServiceProcess;
let apiUrl: string;
let env: Record<string, string>;
let runIds: string[];
let failedRunId: string;
let testId: string;
let suiteRunIds: string[];

beforeAll(async () => {
  db = testDb();
  const tenant = await createTenant(db);
  const applied = await applySampleProject(
    db,
    tenant.workspace.id,
    sampleProject('shop', { count: 3, disabled: 1, suites: ['smoke', 'checkout'] }),
  );
  const smoke = nth(applied.suites, 0);
  testId = nth(smoke.tests, 0).id;
  suiteRunIds = [];
  runIds = [];
  // Three suite runs of `smoke` (2 runs each, the disabled test skipped) and one of `checkout`.
  for (const suite of [smoke, smoke, smoke, nth(applied.suites, 1)]) {
    const created = await insertSuiteRuns(db, tenant.workspace.id, suite.id, { baseUrl: 'http://127.0.0.1:2' });
    suiteRunIds.push(created.suiteRunId ?? '');
    runIds.push(...created.runIds);
  }
  failedRunId = nth(runIds, 0);
  await startRun(db, failedRunId, 2);
  await finishRun(db, failedRunId, 1, {
    status: 'failed',
    resultSummary: 'Failed at step 1.',
    code: 'expectation_failed',
    message: 'no',
    step: 1,
  });
  const port = await freePort();
  apiUrl = `http://127.0.0.1:${port}`;
  api = startService('api', { PORT: String(port), PUBLIC_BASE_URL: apiUrl, LOG_LEVEL: 'warn' });
  await waitReady(`${apiUrl}/readyz`, api);
  env = { TESTRUN_API_URL: apiUrl, TESTRUN_API_KEY: tenant.key };
});

afterAll(async () => {
  await api.stop();
  await db.$disconnect();
});

const api_ = (path: string) =>
  fetch(`${apiUrl}${path}`, { headers: { Authorization: `Bearer ${env.TESTRUN_API_KEY}` } }).then((r) => r.json());

describe('testrun projects', () => {
  it('lists every test with its id, key, name and whether it is enabled; --json is the API body', async () => {
    const table = await runCli(['projects'], env);
    expect(table.code).toBe(0);
    const lines = table.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^PROJECT\s+SUITE\s+TEST ID\s+KEY\s+ENABLED\s+NAME$/);
    expect(lines).toHaveLength(1 + 6);
    expect(table.stdout).toMatch(new RegExp(`shop\\s+smoke\\s+${testId}\\s+t1\\s+yes\\s+smoke test 1`));
    expect(table.stdout).toMatch(/shop\s+checkout\s+tst_\w+\s+t3\s+no\s+checkout test 3/);

    const json = await runCli(['projects', '--json'], env);
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout) as ProjectList).toEqual(await api_('/api/v1/projects'));
  });
});

describe('testrun runs', () => {
  it('pages through every run, newest first, with the cursor it prints', async () => {
    const seen: string[] = [];
    let args = ['runs', '--limit', '3'];
    for (let page = 0; page < 10; page++) {
      const res = await runCli(args, env);
      expect(res.code).toBe(0);
      const lines = res.stdout.trim().split('\n');
      expect(lines[0]).toMatch(/^RUN ID\s+STATUS\s+CREATED\s+DURATION\s+TEST$/);
      seen.push(...lines.slice(1).flatMap((l) => /^(run_\w+)\s/.exec(l)?.[1] ?? []));
      const next = /Next page: --cursor (\S+)/.exec(res.stdout)?.[1];
      if (!next) break;
      args = ['runs', '--limit', '3', '--cursor', next];
    }
    expect([...seen].sort()).toEqual([...runIds].sort());
    expect(new Set(seen).size).toBe(seen.length);
  });

  it('filters as the API does: status, test, suite run; --json is the page', async () => {
    const failed = await runCli(['runs', '--status', 'failed', '--json'], env);
    expect(failed.code).toBe(0);
    const page = JSON.parse(failed.stdout) as RunList;
    expect(page.runs.map((r) => r.id)).toEqual([failedRunId]);
    expect(page.next_cursor).toBeNull();

    const ofTest = await runCli(['runs', '--test', testId], env);
    expect(ofTest.code).toBe(0);
    expect(ofTest.stdout.trim().split('\n')).toHaveLength(1 + 3);
    expect(ofTest.stdout).toMatch(new RegExp(`${failedRunId}\\s+failed\\s+\\S+ \\S+\\s+\\d+ ms\\s+smoke test 1`));

    const ofSuiteRun = JSON.parse(
      (await runCli(['runs', '--suite-run', nth(suiteRunIds, 3), '--json'], env)).stdout,
    ) as RunList;
    expect(ofSuiteRun.runs.map((r) => r.test_name).sort()).toEqual([
      'checkout test 1',
      'checkout test 2',
      'checkout test 3',
    ]);

    const none = await runCli(['runs', '--status', 'error'], env);
    expect(none.code).toBe(0);
    expect(none.stdout.trim()).toBe('No runs.');
  });

  it('exits 2 naming what is wrong with a filter, and without a connection', async () => {
    const badStatus = await runCli(['runs', '--status', 'broken'], env);
    expect(badStatus.code).toBe(2);
    expect(badStatus.stderr).toContain('/status "broken" is not one of');
    const suiteAlone = await runCli(['suite-runs', '--suite', 'smoke', '--json'], env);
    expect(suiteAlone.code).toBe(2);
    expect(JSON.parse(suiteAlone.stdout)).toMatchObject({ exitCode: 2, error: { status: 400, code: 'invalid_query' } });
    expect(suiteAlone.stderr).toContain('/suiteSlug requires projectSlug');
    const badLimit = await runCli(['runs', '--limit', '500'], env);
    expect(badLimit.code).toBe(2);
    expect(badLimit.stderr).toContain('/limit must be between 1 and 100');
    const noApi = await runCli(['projects'], {});
    expect(noApi.code).toBe(2);
    expect(noApi.stderr).toContain('no API URL');
  });
});

describe('testrun suite-runs', () => {
  it('lists suite runs with their counts, filtered by project and suite', async () => {
    const all = await runCli(['suite-runs'], env);
    expect(all.code).toBe(0);
    const lines = all.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^SUITE RUN ID\s+STATUS\s+CREATED\s+SUITE\s+PASSED\/FAILED\/ERROR\/SKIPPED\s+FLAKY$/);
    expect(lines).toHaveLength(1 + 4);
    expect(all.stdout).toMatch(
      new RegExp(`${nth(suiteRunIds, 0)}\\s+running\\s+\\S+ \\S+\\s+shop/smoke\\s+0/1/0/1 of 3`),
    );

    const checkout = JSON.parse(
      (await runCli(['suite-runs', '--project', 'shop', '--suite', 'checkout', '--json'], env)).stdout,
    ) as SuiteRunList;
    expect(checkout.suite_runs.map((s) => s.id)).toEqual([nth(suiteRunIds, 3)]);
  });
});
