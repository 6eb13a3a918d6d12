import AxeBuilder from '@axe-core/playwright';
import { runViewUrl, suiteRunViewUrl } from '@testrun/core/view-links';
import { STEPS } from './seed';
import { startViewSuite, type ViewSuite } from './support';

// A run of a version that discovery warned about shows the warnings on its page, and so does its
// suite run's page: a verdict is read knowing what of the config the service did not apply. The
// warnings are discovery's text (from the team's bundle): escaped, never markup.
const WARNINGS = [
  'the config starts a webServer: the service ignores it and runs the tests against the baseUrl',
  'the bundle was packed with @playwright/test 1.39.0 <script>document.title="owned"</script>; the service runs 1.65',
];

let world: ViewSuite;

beforeAll(async () => {
  world = await startViewSuite([{ name: 'Home page', steps: [STEPS.home(), STEPS.expectHeading()] }], {
    // The suite run and its run execute the project's active deployment, which discovery warned about.
    prepare: async (env, suite) => {
      const [{ id } = { id: '' }] = await env.db.$queryRawUnsafe<Array<{ id: string }>>(
        `SELECT p.active_deployment_id AS id FROM suite_runs s JOIN suites u ON u.id = s.suite_id
         JOIN projects p ON p.id = u.project_id WHERE s.id = $1`,
        suite.suiteRunId,
      );
      await env.db.$executeRawUnsafe(
        'UPDATE deployments SET warnings = $1::jsonb WHERE id = $2',
        JSON.stringify(WARNINGS),
        id,
      );
      await env.db.$executeRawUnsafe('UPDATE suite_runs SET deployment_id = $1 WHERE id = $2', id, suite.suiteRunId);
      await env.db.$executeRawUnsafe(
        'UPDATE runs SET deployment_id = $1 WHERE suite_run_id = $2',
        id,
        suite.suiteRunId,
      );
    },
  });
}, 120_000);

afterAll(() => world.close());

test("a run's page lists its version's warnings as text, and says which version it ran", async () => {
  const { page } = world.viewer;
  await page.goto(world.runUrl(0));
  const section = page.locator('section.deployment-warnings');
  expect(await section.locator('h2').textContent()).toBe('Warnings of version 1');
  expect(await section.locator('li').allTextContents()).toEqual(WARNINGS);
  expect(await section.locator('script').count()).toBe(0);
  expect(await page.title()).not.toBe('owned');
  expect(await page.locator('.meta div', { hasText: 'Version' }).locator('dd').textContent()).toBe('1');
  expect((await new AxeBuilder({ page }).analyze()).violations).toEqual([]);
});

test("the suite run's page lists them too", async () => {
  const { page } = world.viewer;
  await page.goto(world.suiteUrl);
  expect(await page.locator('section.deployment-warnings li').allTextContents()).toEqual(WARNINGS);
});

test('a version without warnings, and a run from before deployments, show no such section', async () => {
  const { env, suite } = world;
  await env.db.$executeRawUnsafe(
    `UPDATE deployments SET warnings = '[]'::jsonb WHERE id = (SELECT deployment_id FROM suite_runs WHERE id = $1)`,
    suite.suiteRunId,
  );
  const { page } = world.viewer;
  await page.goto(world.runUrl(0));
  expect(await page.locator('section.deployment-warnings').count()).toBe(0);
  await env.db.$executeRawUnsafe('UPDATE runs SET deployment_id = NULL WHERE suite_run_id = $1', suite.suiteRunId);
  await page.goto(runViewUrl(env.api.origin, env.api.keys.view, suite.runs[0]?.id ?? ''));
  expect(await page.locator('section.deployment-warnings').count()).toBe(0);
  expect(await page.locator('.meta dt').allTextContents()).not.toContain('Version');
  await page.goto(suiteRunViewUrl(env.api.origin, env.api.keys.view, suite.suiteRunId));
  expect(await page.locator('section.deployment-warnings').count()).toBe(0);
});
