import { mkdirSync, rmSync, symlinkSync } from 'node:fs';
import path from 'node:path';
import { createTenant } from '../support/harness';
import { deployFixture, usePlaywrightWorker, writeTeamRepository } from './playwright-site';
import { apiClient } from './support';

/**
 * What test/e2e/playwright-versions.test.ts and its unsandboxed twin check, with a worker of the
 * environment each gives. A bundle runs on the @playwright/test its repository pins (docs/PLAYWRIGHT.md, "Playwright
 * versions"): a project whose node_modules holds 1.39.0 (one of infra/playwright-versions, which
 * setup installs) deploys with no version warning, each test runs on 1.39 (its packages say so, and
 * `page.clock`, which 1.45 added, is not there, as under `playwright test` 1.39), and a suite run of
 * one of two tests that share a line runs that one alone (1.39 has no --test-list: the wrapper selects
 * by title). Through the real API, worker, sandbox (or none) and Chromium.
 */
const REPO = path.resolve(__dirname, '../..');
// Any version of infra/playwright-versions can be checked the same way: TESTRUN_PINNED_PLAYWRIGHT=1.50.1.
const PINNED = process.env.TESTRUN_PINNED_PLAYWRIGHT ?? '1.39.0';
/** page.clock came in 1.45: a test that uses it fails before. */
const HAS_CLOCK = Number(PINNED.split('.')[1]) >= 45;

/** The team's repository: its config, specs and node_modules/@playwright/test (the installed 1.39.0). */
function teamRepository(): string {
  const files: Record<string, string> = {
    'testrun.yaml': 'slug: pw-versions\n',
    'playwright.config.ts': `import { defineConfig } from '@playwright/test';
export default defineConfig({ testDir: './tests' });
`,
    'tests/version.spec.ts': `import { expect, test } from '@playwright/test';
test('runs on the pinned Playwright', async ({ page }) => {
  expect(require('@playwright/test/package.json').version).toBe('${PINNED}');
  expect(require('playwright-core/package.json').version).toBe('${PINNED}');
  await page.goto('/');
});
test('has no page.clock, which came in 1.45', async ({ page }) => {
  await (page as any).clock.install();
});
test('expects a title the page does not have', async ({ page }) => {
  await page.goto('/');
  await expect(page).toHaveTitle('not its title', { timeout: 500 });
});
`,
    // Two tests at one line: a selection by line would run both.
    'tests/cases.spec.ts': `import { test } from '@playwright/test';
for (const name of ['case-1', 'case-2']) test(name + ' @cases', async ({ page }) => { await page.setExtraHTTPHeaders({ 'x-case': name }); await page.goto('/'); });
`,
  };
  const dir = writeTeamRepository('testrun-pw-versions-', files);
  mkdirSync(path.join(dir, 'node_modules/@playwright'), { recursive: true });
  const installed = path.join(REPO, '.cache/playwright-versions', PINNED, 'node_modules/@playwright/test');
  symlinkSync(installed, path.join(dir, 'node_modules/@playwright/test'));
  return dir;
}

/** Deploys and runs a repository pinned to {@link PINNED} on a worker of `env` (usePlaywrightWorker). */
export function checkPinnedVersion(env: Record<string, string>): void {
  const parts = usePlaywrightWorker(env);
  let dir: string;

  beforeAll(() => {
    dir = teamRepository();
  });

  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it(`runs a repository pinned to ${PINNED} on ${PINNED}, selecting its tests exactly`, async () => {
    const tenant = await createTenant(parts.db, { scopes: ['deploy'] });
    const project = {
      slug: 'pw-versions',
      name: 'Versions',
      baseUrl: parts.site.url,
      playwright: { config: 'playwright.config.ts' },
      suites: [
        { slug: 'version', name: 'Version', playwright: { files: ['tests/version.spec.ts'] } },
        { slug: 'one', name: 'One case', playwright: { grep: 'case-1' } },
      ],
    };
    const deployment = await deployFixture(parts.api.url, tenant.key, path.join(dir, 'testrun.yaml'), project);
    expect(deployment.warnings).toEqual([]);

    const client = apiClient(parts.api.url, tenant.key);
    const version = await client.createSuiteRun({ projectSlug: 'pw-versions', suiteSlug: 'version' });
    const one = await client.createSuiteRun({ projectSlug: 'pw-versions', suiteSlug: 'one' });
    await Promise.all([client.waitSuiteRun(version), client.waitSuiteRun(one)]);
    const runs = await parts.db.run.findMany({ where: { suiteRunId: { in: [version, one] } } });
    const verdicts = Object.fromEntries(runs.map((r) => [r.testName, [r.status, r.resultSummary]]));
    expect(verdicts).toEqual({
      'runs on the pinned Playwright': ['passed', expect.anything()],
      'has no page.clock, which came in 1.45': HAS_CLOCK
        ? ['passed', expect.anything()]
        : ['error', expect.stringContaining("reading 'install'")],
      // Its summary names the spec's line in the repository, whatever the version says of it.
      'expects a title the page does not have': [
        'failed',
        expect.stringMatching(/^Failed at step \d+ \(.*\): .* \(tests\/version\.spec\.ts:12\)$/),
      ],
      'case-1 @cases': ['passed', expect.anything()],
    });
    const cases = parts.site.seen.map((headers) => headers['x-case']).filter((name) => name !== undefined);
    // Its page and the favicon Chromium asks for with the same headers: case-2 never ran.
    expect(new Set(cases)).toEqual(new Set(['case-1']));
  });
}
