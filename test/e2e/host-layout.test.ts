import path from 'node:path';
import { createTenant } from '../support/harness';
import { deployFixture, usePlaywrightWorker } from './playwright-site';
import { apiClient } from './support';

/**
 * A suite run's batch on the real worker, its sandbox made as the worker makes it (the share's
 * copies of the service's packages, the code cache, the control directory, the egress proxy's
 * socket): specs that read the sandbox's mount table, cgroups and process list find no path of the
 * worker's host (test/fixtures/pw-layout), and pass.
 */
jest.setTimeout(180_000);

const FIXTURE = path.resolve(__dirname, '../fixtures/pw-layout');
const parts = usePlaywrightWorker({ WORKER_CONCURRENCY: '2' });

it("a batch's tests find no path of the worker's host in their sandbox", async () => {
  const tenant = await createTenant(parts.db, { scopes: ['deploy'] });
  const project = {
    slug: 'pw-layout',
    name: 'Layout',
    baseUrl: parts.site.url,
    playwright: { config: 'e2e/playwright.config.ts' },
    suites: [{ slug: 'all', name: 'All', playwright: { project: 'chromium' } }],
  };
  await deployFixture(parts.api.url, tenant.key, path.join(FIXTURE, 'testrun.yaml'), project);
  const client = apiClient(parts.api.url, tenant.key);
  const suiteRunId = await client.createSuiteRun({ projectSlug: 'pw-layout', suiteSlug: 'all' });
  const suite = await client.waitSuiteRun(suiteRunId);
  const runs = await Promise.all(suite.tests.map((t) => client.getRun(t.runId)));
  // A failed test's summary holds what it found.
  const outcome = (r: (typeof runs)[number]) => (r.status === 'passed' ? 'passed' : [r.status, r.result_summary]);
  expect(Object.fromEntries(runs.map((r) => [r.test_name, outcome(r)]))).toEqual({
    'no host path 1': 'passed',
    'no host path 2': 'passed',
  });
  const [batches] = await parts.db.$queryRawUnsafe<Array<{ batches: number; alone: number }>>(
    `SELECT count(DISTINCT batch_id)::int AS batches, count(*) FILTER (WHERE batch_id IS NULL)::int AS alone
     FROM runs WHERE suite_run_id = $1`,
    suiteRunId,
  );
  expect(batches).toEqual({ batches: 1, alone: 0 });
});
