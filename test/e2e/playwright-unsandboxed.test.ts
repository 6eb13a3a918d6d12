import path from 'node:path';
import { createTenant } from '../support/harness';
import { deployFixture, usePlaywrightWorker } from './playwright-site';
import { apiClient } from './support';

/**
 * A worker with PLAYWRIGHT_SANDBOX=off (docs/SANDBOX.md, "Opting out") runs a suite run's batch and a
 * single test's run to their verdicts. Without the sandbox, Chromium keeps its singleton socket under
 * the run's scratch directory on the host: the worker's scratch names must leave that Unix socket's
 * path under 108 bytes (it did not, and every Playwright run of such a worker failed to launch its
 * browser).
 */
jest.setTimeout(180_000);

const FIXTURE = path.resolve(__dirname, '../fixtures/pw-workers');

const parts = usePlaywrightWorker({ WORKER_CONCURRENCY: '2', PLAYWRIGHT_SANDBOX: 'off' });

it('runs a suite run and a single test without the sandbox', async () => {
  const tenant = await createTenant(parts.db, { scopes: ['deploy'] });
  const project = {
    slug: 'pw-unsandboxed',
    name: 'Unsandboxed',
    baseUrl: parts.site.url,
    playwright: { config: 'e2e/playwright.config.ts' },
    suites: [
      {
        slug: 'plain',
        name: 'Plain',
        playwright: { files: ['e2e/tests/plain.spec.ts', 'e2e/tests/cache.spec.ts'] },
      },
    ],
  };
  await deployFixture(parts.api.url, tenant.key, path.join(FIXTURE, 'testrun.yaml'), project);
  const client = apiClient(parts.api.url, tenant.key);
  const suite = await client.waitSuiteRun(
    await client.createSuiteRun({ projectSlug: 'pw-unsandboxed', suiteSlug: 'plain' }),
  );
  expect(suite.tests.map((t) => [t.name, t.status])).toEqual(
    expect.arrayContaining([
      ['plain 1', 'passed'],
      ['plain 2', 'passed'],
      ['the browser keeps its HTTP cache', 'passed'],
    ]),
  );
  expect(suite.tests).toHaveLength(3);
  const { test_id: testId } = await client.getRun(suite.tests[0]?.runId ?? '');
  const run = await client.waitRun(await client.createRun({ testId }));
  expect([run.status, run.result_summary]).toEqual(['passed', expect.any(String)]);
  expect(parts.workerLog.text()).toMatch(/PLAYWRIGHT_SANDBOX=off/);
});
