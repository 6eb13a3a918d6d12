import path from 'node:path';
import { parseAlternateLink } from '@testrun/client';
import type { Db } from '@testrun/core/db';
import type { Deployment } from '@testrun/contracts';
import { readWorkerConfig } from '../../apps/worker/src/config';
import { startWorkerService, type WorkerService } from '../../apps/worker/src/service/worker-service';
import { createTenant, testDb } from '../support/harness';
import { present } from '../support/present';
import { deployFixture, SHOP_PASSWORD, startRecorder, startShop } from './playwright-site';
import { apiClient, memoryLogger, startApi, waitUntil } from './support';

/**
 * A team's Playwright project end to end: packed as `testrun deploy` packs it, uploaded, discovered
 * by the worker in its sandbox, and run per test, per suite and per project by the real worker in
 * the real sandbox, with a secret that logs in, headers that reach the target only, a setup
 * project, a retried flaky test, a failing expectation and a project of another browser.
 */
jest.setTimeout(300_000);

const FIXTURE = path.resolve(__dirname, '../fixtures/pw-shop');
const CONFIG = 'e2e/playwright.config.ts';

let db: Db;
let shop: Awaited<ReturnType<typeof startShop>>;
let other: Awaited<ReturnType<typeof startRecorder>>;
let api: Awaited<ReturnType<typeof startApi>>;
let worker: WorkerService;
let client: ReturnType<typeof apiClient>;
let key: string;
let workspaceId: string;
const workerLog = memoryLogger('worker');

beforeAll(async () => {
  db = testDb();
  [shop, other, api] = await Promise.all([startShop(), startRecorder(), startApi()]);
  const tenant = await createTenant(db, { scopes: ['deploy'] });
  [key, workspaceId] = [tenant.key, tenant.workspace.id];
  client = apiClient(api.url, key);
  worker = await startWorkerService(readWorkerConfig({ ...process.env, WORKER_CONCURRENCY: '1' }), {
    logger: workerLog.logger,
    reconcile: false,
  });
});

afterAll(async () => {
  await worker.stop();
  await Promise.all([api.close(), shop.close(), other.close()]);
  await db.$disconnect();
});

async function call(method: string, p: string, body?: unknown) {
  const res = await fetch(`${api.url}${p}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  return { status: res.status, body: text ? (JSON.parse(text) as unknown) : null };
}

function projectFile(baseUrl: string) {
  return {
    slug: 'pw-shop',
    name: 'Playwright shop',
    baseUrl,
    playwright: { config: CONFIG },
    suites: [
      { slug: 'smoke', name: 'Smoke', playwright: { grep: '@smoke' } },
      { slug: 'chromium', name: 'Chromium', playwright: { project: 'chromium' } },
      { slug: 'checkout', playwright: { files: ['e2e/tests/checkout.spec.ts'] } },
      { slug: 'firefox', name: 'Firefox', playwright: { project: 'firefox' } },
    ],
  };
}

function deploy(): Promise<Deployment> {
  return deployFixture(api.url, key, path.join(FIXTURE, 'testrun.yaml'), projectFile(shop.url));
}

it('discovers the tests in the sandbox and keeps their testIds from one deployment to the next', async () => {
  const first = await deploy();
  const smoke = first.tests.filter((t) => t.suiteSlug === 'smoke');
  // A grep selects in every project: the Firefox project's copy is a test too (skipped when run).
  expect(smoke.map((t) => [t.name, t.location])).toEqual([
    [
      'catalog › lists every product @smoke',
      {
        file: 'e2e/tests/catalog.spec.ts',
        line: 5,
        project: 'chromium',
        titlePath: ['catalog', 'lists every product @smoke'],
      },
    ],
    [
      'catalog › lists every product @smoke',
      {
        file: 'e2e/tests/catalog.spec.ts',
        line: 5,
        project: 'firefox',
        titlePath: ['catalog', 'lists every product @smoke'],
      },
    ],
  ]);
  const chromium = first.tests.filter((t) => t.suiteSlug === 'chromium').map((t) => t.name);
  // The setup project's test is not a run of the suites that depend on it.
  expect(chromium).not.toContain('log in');
  expect(chromium).toEqual(
    expect.arrayContaining(['catalog › shows the sale banner', 'checkout › pays', 'headers reach the target only']),
  );
  expect(first.bundle).toMatch(/^sha256:/);
  const second = await deploy();
  expect(second.tests.map((t) => t.testId)).toEqual(first.tests.map((t) => t.testId));
});

it('runs each test as a run: outcomes, the secret login, the setup project, a retried flaky test, headers to the target only', async () => {
  await call('PUT', '/api/v1/projects/pw-shop/secrets/SHOP_PASSWORD', { value: SHOP_PASSWORD });
  const suiteRunId = await client.createSuiteRun({
    projectSlug: 'pw-shop',
    suiteSlug: 'chromium',
    headers: { 'x-preview-token': 'letmein' },
    variables: { OTHER_ORIGIN: other.url },
  });
  const suite = await client.waitSuiteRun(suiteRunId);
  const byName = new Map<string, { status: string; code: string | null }>();
  const summaries = new Map<string, string>();
  for (const entry of suite.tests) {
    const run = await client.getRun(entry.runId);
    const [row] = await db.$queryRawUnsafe<Array<{ code: string | null }>>(
      'SELECT outcome_code::text AS code FROM runs WHERE id = $1',
      run.id,
    );
    byName.set(run.test_name, { status: run.status, code: row?.code ?? null });
    summaries.set(run.test_name, run.result_summary);
  }
  expect(Object.fromEntries(byName)).toEqual({
    'catalog › lists every product @smoke': { status: 'passed', code: null },
    // #banner is not on the page: the expect waited for an element that never appeared (docs/WORKER.md).
    'catalog › shows the sale banner': { status: 'failed', code: 'element_not_found' },
    'checkout › adds to the cart': { status: 'passed', code: null },
    'checkout › pays': { status: 'passed', code: null },
    'recovers on a retry @flaky': { status: 'passed', code: null },
    'headers reach the target only': { status: 'passed', code: null },
  });
  // The summary names the failing step, the file and the line, as a step test's does.
  expect(summaries.get('catalog › shows the sale banner')).toMatch(
    /^Failed at step \d+ \(Expect "toHaveText"\).*e2e\/tests\/catalog\.spec\.ts:16/,
  );
  expect(suite.passed_count).toBe(5);
  // The config's `retries: 1`: the test that passed on its second try is flaky, each try an attempt.
  expect(suite.flaky_count).toBe(1);
  expect(suite.tests.filter((t) => t.attempts > 1).map((t) => [t.name, t.flaky])).toEqual(
    expect.arrayContaining([
      ['recovers on a retry @flaky', true],
      ['catalog › shows the sale banner', false],
    ]),
  );
  // The failing step shows the lines of the team's TypeScript around the error, the line marked.
  const banner = suite.tests.find((t) => summaries.get(t.name)?.startsWith('Failed'));
  const [failingStep] = await db.$queryRawUnsafe<Array<{ error: string }>>(
    `SELECT error FROM step_results WHERE run_id = $1 AND error IS NOT NULL ORDER BY depth DESC LIMIT 1`,
    banner?.runId,
  );
  expect(failingStep?.error).toMatch(/> 16 \|\s+await expect\(page\.locator\('#banner'\)\)\.toHaveText\('Sale!'\);/);
  // One worker slot: the suite run's tests ran as one batch, in one sandbox (docs/PLAYWRIGHT.md, "Batches").
  const [batches] = await db.$queryRawUnsafe<Array<{ batches: number; alone: number }>>(
    `SELECT count(DISTINCT batch_id)::int AS batches, count(*) FILTER (WHERE batch_id IS NULL)::int AS alone
     FROM runs WHERE suite_run_id = $1`,
    suiteRunId,
  );
  expect(batches).toEqual({ batches: 1, alone: 0 });
  expect(other.seen.length).toBeGreaterThan(0);
  expect(other.seen.some((h) => JSON.stringify(h).includes('letmein'))).toBe(false);
  // The secret is nowhere the service keeps or prints.
  const stored = await db.$queryRawUnsafe<Array<{ text: string }>>(
    `SELECT concat_ws(' ', r.result_summary, r.outcome_message, string_agg(concat_ws(' ', s.label, s.error), ' ')) AS text
     FROM runs r LEFT JOIN step_results s ON s.run_id = r.id WHERE r.suite_run_id = $1 GROUP BY r.id`,
    suiteRunId,
  );
  expect(stored.map((r) => r.text).join('\n')).not.toContain(SHOP_PASSWORD);
  expect(workerLog.text()).not.toContain(SHOP_PASSWORD);
  expect(workerLog.text()).not.toContain('letmein');
  // A run of the batch that is not its leader masks the values the batch's sandbox holds (its leader's).
  const headersRun = suite.tests.find((t) => t.name === 'headers reach the target only');
  const labels = await db.$queryRawUnsafe<Array<{ label: string; leader: boolean }>>(
    `SELECT s.label, r.id = (SELECT id FROM runs WHERE batch_id = r.batch_id ORDER BY started_at LIMIT 1) AS leader
     FROM step_results s JOIN runs r ON r.id = s.run_id WHERE s.run_id = $1`,
    headersRun?.runId,
  );
  expect(labels.map((l) => l.label)).toContain('signed in with ****');
  expect(labels[0]?.leader).toBe(false);
});

/** The run's page for people, through the view link of GET run. */
async function viewPage(runId: string): Promise<string> {
  const res = await fetch(`${api.url}/api/v1/runs/${runId}`, { headers: { authorization: `Bearer ${key}` } });
  const { pathname, search } = new URL(present(parseAlternateLink(res.headers.get('link')), 'the view link'));
  return (await fetch(`${api.url}${pathname}${search}`)).text();
}

it("a test the config's retries try again: each try an attempt of the run, passed and flaky; a request's retries: 0 turns them off", async () => {
  await call('PUT', '/api/v1/projects/pw-shop/secrets/SHOP_PASSWORD', { value: SHOP_PASSWORD });
  const test = await db.test.findFirstOrThrow({
    where: { workspaceId, name: 'recovers on a retry @flaky' },
    select: { id: true },
  });
  const run = await client.waitRun(await client.createRun({ testId: test.id }));
  expect(run).toMatchObject({ status: 'passed', flaky: true, attempts: 2, retries: 0, error: null });
  expect(run.result_summary).toMatch(
    /^Passed on retry 1 \(its Playwright config's retries\); the first attempt failed at step \d+ \(Expect "toHaveText"\)/,
  );
  expect(run.previous_attempts).toEqual([expect.objectContaining({ attempt: 1, status: 'failed', error: null })]);
  // The run's duration covers both tries: the first's own and at least as long again for the second.
  const first = run.previous_attempts[0]?.duration_ms ?? 0;
  expect(run.duration_ms ?? 0).toBeGreaterThan(first);
  // Each try keeps its own steps under an execution number of its own: the first's failed, the second's passed.
  const steps = await db.stepResult.findMany({ where: { runId: run.id }, select: { attempt: true, outcome: true } });
  const outcomes = (attempt: number) => new Set(steps.filter((s) => s.attempt === attempt).map((s) => s.outcome));
  expect([...outcomes(1)]).toContain('failed');
  expect([...outcomes(2)]).toEqual(['passed']);
  expect(steps.every((s) => s.attempt === 1 || s.attempt === 2)).toBe(true);
  // The failed try's evidence (its trace, its screenshot) is kept under its own execution number.
  const artifacts = await db.artifact.findMany({ where: { runId: run.id }, select: { attempt: true } });
  expect(artifacts.length).toBeGreaterThan(0);
  expect(artifacts.every((a) => a.attempt === 1)).toBe(true);
  // The view shows both attempts as tabs, and marks the run flaky.
  const page = await viewPage(run.id);
  expect(page).toContain('data-flaky-mark');
  expect(page).toMatch(/>Run <span class="chip chip-failed"/);
  expect(page).toMatch(/>Retry #1 <span class="chip chip-passed"/);
  // A request's explicit `retries: 0` wins over the config's: one try, which failed.
  const once = await client.waitRun(await client.createRun({ testId: test.id, retries: 0 }));
  expect(once).toMatchObject({ status: 'failed', flaky: false, attempts: 1, previous_attempts: [] });
});

it('a suite run cancelled while its batch runs: every open run ends cancelled, and the worker carries on', async () => {
  const request = {
    projectSlug: 'pw-shop',
    suiteSlug: 'chromium',
    headers: { 'x-preview-token': 'letmein' },
    variables: { OTHER_ORIGIN: other.url },
  };
  const suiteRunId = await client.createSuiteRun(request);
  await waitUntil(async () => (await client.getSuiteRun(suiteRunId)).status === 'running');
  expect((await call('POST', `/api/v1/suite-runs/${suiteRunId}/cancel`)).status).toBe(202);
  const cancelled = await client.waitSuiteRun(suiteRunId);
  const runs = await Promise.all(cancelled.tests.map((t) => client.getRun(t.runId)));
  // Whatever had ended stays as it ended; everything else was cancelled, running or waiting its turn.
  const open = runs.filter((r) => r.status !== 'passed' && r.status !== 'failed');
  expect(open.length).toBeGreaterThan(0);
  for (const run of open)
    expect([run.status, run.skip_reason ?? run.error?.code]).toEqual(
      run.status === 'skipped' ? ['skipped', 'cancelled'] : ['error', 'cancelled'],
    );
  // The worker carries on: the next suite run's batch runs (the smoke suite: its Chromium test
  // passes, its Firefox copy is skipped; the chromium suite's verdicts are the second test's).
  const next = await client.waitSuiteRun(await client.createSuiteRun({ ...request, suiteSlug: 'smoke' }));
  expect([next.passed_count, next.failed_count, next.skipped_count]).toEqual([1, 0, 1]);
});

it('skips the tests of a project whose browser is not Chromium', async () => {
  const suite = await client.waitSuiteRun(
    await client.createSuiteRun({ projectSlug: 'pw-shop', suiteSlug: 'firefox' }),
  );
  expect(suite.skipped_count).toBe(suite.total_count);
  const run = await client.getRun(suite.tests[0]?.runId ?? '');
  expect([run.status, run.skip_reason]).toEqual(['skipped', 'browser_unavailable']);
});
