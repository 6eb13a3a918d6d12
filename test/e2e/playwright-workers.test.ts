import path from 'node:path';
import { createTenant } from '../support/harness';
import { deployFixture, usePlaywrightWorker } from './playwright-site';
import { apiClient } from './support';

/**
 * A suite run on a worker of two slots (docs/PLAYWRIGHT.md, "Batches"): the runs the two slots take
 * at once gather in one batch, which runs the suite run's tests in one sandbox with two Playwright
 * workers, as `playwright test --workers=2` would. Two of its tests pass only when they run at the
 * same time in the same sandbox (they meet in its temporary directory).
 */
jest.setTimeout(180_000);

const FIXTURE = path.resolve(__dirname, '../fixtures/pw-workers');
const parts = usePlaywrightWorker({ WORKER_CONCURRENCY: '2' });

it("runs a suite run's tests in one sandbox with a Playwright worker for each slot", async () => {
  const tenant = await createTenant(parts.db, { scopes: ['deploy'] });
  const project = {
    slug: 'pw-workers',
    name: 'Two workers',
    baseUrl: parts.site.url,
    playwright: { config: 'e2e/playwright.config.ts' },
    suites: [{ slug: 'all', name: 'All', playwright: { project: 'chromium' } }],
  };
  await deployFixture(parts.api.url, tenant.key, path.join(FIXTURE, 'testrun.yaml'), project);
  const client = apiClient(parts.api.url, tenant.key);
  const suiteRunId = await client.createSuiteRun({ projectSlug: 'pw-workers', suiteSlug: 'all' });
  const suite = await client.waitSuiteRun(suiteRunId);
  const runs = await Promise.all(suite.tests.map((t) => client.getRun(t.runId)));
  expect(Object.fromEntries(runs.map((r) => [r.test_name, [r.status, r.result_summary]]))).toEqual({
    'left meets right': ['passed', expect.any(String)],
    'left carries on': ['passed', expect.any(String)],
    'right meets left': ['passed', expect.any(String)],
    'right carries on': ['passed', expect.any(String)],
    'plain 1': ['passed', expect.any(String)],
    'plain 2': ['passed', expect.any(String)],
    'the browser keeps its HTTP cache': ['passed', expect.any(String)],
  });
  // One batch held both slots: every run of the suite run is its member.
  const [batches] = await parts.db.$queryRawUnsafe<Array<{ batches: number; alone: number }>>(
    `SELECT count(DISTINCT batch_id)::int AS batches, count(*) FILTER (WHERE batch_id IS NULL)::int AS alone
     FROM runs WHERE suite_run_id = $1`,
    suiteRunId,
  );
  expect(batches).toEqual({ batches: 1, alone: 0 });
  expect(parts.workerLog.text()).toMatch(/Playwright batch started.*"workers":2/);
  // Where its start went, once: the sandbox started, then its runner listed the tests, then one began.
  const began = parts.workerLog
    .text()
    .split('\n')
    .filter((line) => line.includes('Playwright batch began its first test'))
    .map((line) => JSON.parse(line) as { sandboxMs: number; listedMs: number; firstTestMs: number });
  expect(began).toHaveLength(1);
  const [times] = began;
  expect(times?.sandboxMs).toBeGreaterThanOrEqual(0);
  expect(times?.listedMs).toBeGreaterThanOrEqual(times?.sandboxMs ?? Infinity);
  expect(times?.firstTestMs).toBeGreaterThanOrEqual(times?.listedMs ?? Infinity);
});
