import path from 'node:path';
import { deployForTenant, oneSuiteProject, usePlaywrightWorker } from './playwright-site';

/**
 * A Playwright test's time is Playwright's (docs/PLAYWRIGHT.md, "Time"), and its verdict the one
 * Playwright gives: a real worker, its reconciler on a short grace, and the fixture test/fixtures/pw-time
 * (its config's `timeout` is 2 s). A test that sets a longer timeout of its own, or is `test.slow()`,
 * passes with its steps, though it runs past its config's timeout and past the run's stored budget
 * (which the service used to force on the config and end the run at: "time budget of 2 s exceeded
 * (the worker did not report back)", Playwright's result thrown away); a test that outlasts its
 * config's timeout ends `timeout` (the run's budget of 30 s used to replace the config's); a locator
 * that never finds its element, in an action or an `expect`, is `failed`/`element_not_found`.
 */
jest.setTimeout(180_000);

const FIXTURE = path.resolve(__dirname, '../fixtures/pw-time');

const env = { WORKER_CONCURRENCY: '2', RECONCILE_INTERVAL_MS: '200', RECONCILE_DEADLINE_GRACE_MS: '200' };
const parts = usePlaywrightWorker(env, true);

it("runs each test in Playwright's time and records Playwright's verdict, steps included", async () => {
  const selection = { slug: 'time', playwright: { grepInvert: 'takes a while|out of time' } };
  const project = oneSuiteProject('pw-time', parts.site.url, 'e2e/playwright.config.js', selection);
  const { tenant, client } = await deployForTenant(parts, path.join(FIXTURE, 'testrun.yaml'), project);
  // The runs' stored budget as short as the config's timeout: a deadline the service kept from it
  // would end the longer tests before Playwright does.
  const workspaceId = tenant.workspace.id;
  const shorter = { data: { timeoutMs: 2_000 } };
  expect((await parts.db.deploymentTest.updateMany({ where: { deployment: { workspaceId } }, ...shorter })).count).toBe(
    5,
  );
  expect((await parts.db.test.updateMany({ where: { workspaceId }, ...shorter })).count).toBe(5);
  const suiteRunId = await client.createSuiteRun({ projectSlug: 'pw-time', suiteSlug: 'time' });
  await client.waitSuiteRun(suiteRunId);
  const runs = await parts.db.run.findMany({ where: { suiteRunId }, include: { stepResults: true } });
  const verdicts = Object.fromEntries(runs.map((r) => [r.testName, [r.status, r.outcomeCode]]));
  expect(verdicts).toEqual({
    'sets a longer timeout of its own': ['passed', null],
    'is slow': ['passed', null],
    'runs out of its config timeout': ['error', 'timeout'],
    'locators › clicks what is missing': ['failed', 'element_not_found'],
    'locators › expects to see what is missing': ['failed', 'element_not_found'],
  });
  const longer = runs.find((r) => r.testName.endsWith('sets a longer timeout of its own'));
  expect(longer?.stepResults.map((s) => s.label)).toEqual(
    expect.arrayContaining(['take longer than the config timeout']),
  );
  expect(longer?.attempt).toBe(1);
  const outOfTime = runs.find((r) => r.testName.endsWith('runs out of its config timeout'));
  expect(outOfTime?.resultSummary).toContain('Test timeout of 2000ms exceeded');
});

it('shows a run that timed out on each try as Playwright does: its words and step, its screenshots, the tries', async () => {
  const selection = { slug: 'hook', playwright: { grep: 'out of time' } };
  const project = oneSuiteProject('pw-hook', parts.site.url, 'e2e/playwright.config.js', selection);
  const { client } = await deployForTenant(parts, path.join(FIXTURE, 'testrun.yaml'), project);
  const suiteRun = await client.waitSuiteRun(
    await client.createSuiteRun({ projectSlug: 'pw-hook', suiteSlug: 'hook' }),
  );
  const run = await client.getRun(suiteRun.tests[0]?.runId as string);
  // Playwright's words and the step they name, the same on the summary and the error, on each try.
  const words = 'Test timeout of 6000ms exceeded while running "beforeEach" hook.';
  expect(run.result_summary).toBe(`Timed out at step 2 (beforeEach hook): ${words} (e2e/time.spec.js:50)`);
  expect(run.error).toEqual({ code: 'timeout', message: words, step: 2 });
  expect(run.attempts).toBe(2);
  expect(run.previous_attempts.map((a) => a.error)).toEqual([{ code: 'timeout', message: words, step: 2 }]);
  // The run lasts both tries.
  expect(run.duration_ms).toBeGreaterThan(run.previous_attempts[0]?.duration_ms ?? Infinity);

  // The view: each try's tab names the try, says what Playwright said at the step it names, and
  // shows the screenshot Playwright took of that try's page.
  const shots = await parts.db.artifact.findMany({
    where: { runId: run.id, kind: 'screenshot' },
    orderBy: { attempt: 'asc' },
  });
  expect(shots.map((a) => [a.attempt, a.name])).toEqual([
    [1, 'test-failed-1.png'],
    [2, 'test-failed-1.png'],
  ]);
  const suitePage = await fetch(new URL(new URL(suiteRun.suiteRunUrl).pathname, parts.api.url)).then((r) => r.text());
  const link = /href="([^"]*\/view\/runs\/[^/"]+\/[^/"]+)"/.exec(suitePage)?.[1] as string;
  const page = await fetch(new URL(link, parts.api.url)).then((r) => r.text());
  const text = page.replace(/<[^>]+>/g, ' ').replace(/\s+/g, ' ');
  expect(text).toContain('Attempt 2, as its Playwright config retries');
  expect(text).toContain('Retry #1 error');
  const callouts = page.split('class="callout callout-error"').slice(1);
  expect(callouts).toHaveLength(2);
  for (const [i, callout] of callouts.entries()) {
    const card = callout.slice(0, callout.indexOf('</section>'));
    expect(card).toContain('Error at step 2: beforeEach hook');
    expect(card).toContain('Timed out <code>timeout</code>');
    expect(card).toContain(`/artifacts/${shots[i]?.id}"`);
  }
});
