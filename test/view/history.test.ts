import AxeBuilder from '@axe-core/playwright';
import { revokeViewLinks, runViewUrl, suiteRunViewUrl } from '@testrun/core/view-links';
import type { Page } from 'playwright';
import { applySampleProject } from '../support/harness';
import {
  createSuiteRun,
  executeSuite,
  recordFinishedRuns,
  STEPS,
  type EarlierOutcome,
  type RunPlan,
  type SeededSuite,
} from './seed';
import { defined, openViewer, startViewEnv, type ViewEnv, type Viewer } from './support';

// A test's history on the suite page, in a passed test's fragment and on the run page, in real
// Chromium: the page under test is a real execution; the 23 earlier executions of the same suite
// (22 suite runs and one project-mode request) are recorded as finished rows. Beside them, in the
// same workspace, another suite whose tests have the same keys and names (other tests: not in the
// history), and a run of the test recorded under that suite (the same test: in its history, as a
// test that several suites select has one); and a second workspace with the same project.
let env: ViewEnv;
let viewer: Viewer;
let suite: SeededSuite;
let suiteUrl: string;
/** The runs of "Sign in works" (B) and "Home page loads" (A), oldest first, the page's run last. */
const historyB: string[] = [];
const historyA: string[] = [];
/** Runs no strip of the first workspace's suite may show. */
const foreign: string[] = [];
let movedRunId: string;
let revokedB: string;
let earlierB8: string;
let flakyB18: string;
let ws2SuiteRunId: string;
const ws2B: string[] = [];

const PLANS: RunPlan[] = [
  { name: 'Home page loads', steps: [STEPS.home(), STEPS.expectHeading()] },
  { name: 'Sign in works', steps: [STEPS.home(), STEPS.clickSignIn()] },
];

/** B's outcome in the k-th earlier suite run. */
function outcomeB(k: number): EarlierOutcome {
  if (k % 6 === 2) return 'failed';
  if (k % 9 === 4) return 'error';
  if (k % 5 === 3) return 'flaky';
  return 'passed';
}

const HOUR = 3_600_000;

async function suiteOf(suiteRunId: string) {
  return env.db.suiteRun.findUniqueOrThrow({ where: { id: suiteRunId }, select: { workspaceId: true, suiteId: true } });
}

beforeAll(async () => {
  env = await startViewEnv();
  suite = await createSuiteRun(env.db, env.api.keys, PLANS, { baseUrl: env.site.url });
  const target = await suiteOf(suite.suiteRunId);
  const base = Date.now() - 30 * HOUR;
  for (let k = 0; k < 22; k++) {
    const at = new Date(base + k * HOUR);
    const { suiteRunId, runIds } = await recordFinishedRuns(env.db, target, {
      at,
      outcomeOf: (i) => (i === 1 ? outcomeB(k) : k === 20 ? 'flaky' : 'passed'),
    });
    historyA.push(defined(runIds[0], 'run A'));
    historyB.push(defined(runIds[1], 'run B'));
    if (k === 8) earlierB8 = defined(runIds[1], 'run B of 8');
    if (k === 18) flakyB18 = defined(runIds[1], 'run B of 18');
    if (k === 19) {
      await revokeViewLinks(env.db, defined(suiteRunId, 'suite run 19'));
      revokedB = defined(runIds[1], 'run B of 19');
    }
    if (k === 10) {
      // A project-mode request between the 11th and 12th suite runs: runs of the tests without a suite run.
      const loose = await recordFinishedRuns(env.db, target, {
        at: new Date(at.getTime() + HOUR / 2),
        outcomeOf: (i) => (i === 1 ? 'failed' : 'passed'),
        suiteRun: false,
      });
      historyA.push(defined(loose.runIds[0], 'loose run A'));
      historyB.push(defined(loose.runIds[1], 'loose run B'));
    }
  }
  historyA.push(defined(suite.runs[0], 'run A').id);
  historyB.push(defined(suite.runs[1], 'run B').id);

  // Another suite of the same workspace, its tests named and keyed as the suite's own.
  const other = await applySampleProject(env.db, suite.workspaceId, {
    slug: `other-${suite.suiteRunId.slice(-8)}`,
    name: 'Other',
    baseUrl: env.site.url,
    suites: [
      {
        slug: 'checkout',
        name: 'Checkout',
        tests: PLANS.map((p, i) => ({
          key: `t${i + 1}`,
          name: p.name,
          enabled: true,
          timeoutMs: 30_000,
          steps: p.steps,
        })),
      },
    ],
  });
  const otherSuite = { workspaceId: suite.workspaceId, suiteId: defined(other.suites[0], 'other suite').id };
  const otherRuns = await recordFinishedRuns(env.db, otherSuite, {
    at: new Date(base + 15.5 * HOUR),
    outcomeOf: () => 'failed',
  });
  foreign.push(...otherRuns.runIds);
  // A run of the same test row recorded under the other suite (a test that several suites select).
  const moved = await recordFinishedRuns(env.db, otherSuite, {
    at: new Date(base + 16.5 * HOUR),
    outcomeOf: () => 'error',
  });
  movedRunId = defined(moved.runIds[1], 'moved run');
  await env.db.run.update({ where: { id: movedRunId }, data: { testId: (await testOf(historyB[0])).testId } });
  foreign.push(defined(moved.runIds[0], 'moved run of the other test'));
  // One test, one history whichever suite ran it: the moved run is B's, after its 17th suite run.
  historyB.splice(18, 0, movedRunId);

  // A second workspace with the same project: its own history only.
  const ws2 = await createSuiteRun(env.db, env.api.keys, PLANS, { baseUrl: env.site.url });
  const ws2Target = await suiteOf(ws2.suiteRunId);
  for (let k = 0; k < 3; k++) {
    const recorded = await recordFinishedRuns(env.db, ws2Target, {
      at: new Date(base + (k + 5) * HOUR),
      outcomeOf: (i) => (i === 1 && k === 2 ? 'failed' : 'passed'),
    });
    ws2B.push(defined(recorded.runIds[1], 'ws2 run B'));
    ws2SuiteRunId = defined(recorded.suiteRunId, 'ws2 suite run');
  }
  foreign.push(...ws2B, ...ws2.runs.map((r) => r.id));

  await executeSuite(env.worker, suite);
  viewer = await openViewer(env);
  suiteUrl = suiteRunViewUrl(env.api.origin, env.api.keys.view, suite.suiteRunId);
}, 180_000);

afterAll(async () => {
  await viewer.context.close();
  await env.close();
});

function testOf(runId: string | undefined) {
  return env.db.run.findUniqueOrThrow({ where: { id: defined(runId, 'run id') }, select: { testId: true } });
}

/** The run ids of the marks in `scope`, in the order shown. */
function markIds(page: Page, scope: string): Promise<string[]> {
  return page
    .locator(`${scope} .history-marks [data-history-run]`)
    .evaluateAll((marks) => marks.map((m) => m.getAttribute('data-history-run') ?? ''));
}

test('a failed test on the suite page shows its last 20 outcomes, oldest first, with the rate', async () => {
  const { page } = viewer;
  await page.goto(suiteUrl);
  const currentB = defined(historyB.at(-1), 'current B');
  const entry = `li.test[data-run="${currentB}"]`;
  expect(historyB).toHaveLength(25);
  expect(await markIds(page, entry)).toEqual(historyB.slice(-20));
  expect(await page.locator(`${entry} .history-rate`).textContent()).toBe(
    '12 passed first time, 1 flaky, 5 failed, 2 errors of the last 20: 60% passed without a retry (65% with retries)',
  );
  // The page's own run is the last mark, named as such; the flaky one says so in words.
  const current = page.locator(entry).getByRole('link', { name: /, this run$/ });
  expect(await current.getAttribute('data-history-run')).toBe(currentB);
  expect(await current.getAttribute('aria-current')).toBe('true');
  const flaky = page.locator(entry).getByRole('link', { name: /^passed \(flaky: on a retry\), \d{4}-\d\d-\d\d / });
  expect(await flaky.getAttribute('data-history-run')).toBe(flakyB18);
  expect(
    await page
      .locator(entry)
      .getByRole('link', { name: /^error, / })
      .count(),
  ).toBe(2);
  // The suite run whose links were revoked is shown, but not as a link.
  expect(await page.locator(`${entry} span[data-history-run="${revokedB}"]`).count()).toBe(1);
  expect(await page.locator(`${entry} a[data-history-run="${revokedB}"]`).count()).toBe(0);
  // Another suite's tests' runs and the other workspace's are nowhere on the page; the run of the
  // same test recorded under another suite is one of its marks.
  const body = await page.content();
  expect(foreign.filter((id) => body.includes(id))).toEqual([]);
  expect(await markIds(page, entry)).toContain(movedRunId);
});

test("a passed test's history arrives with its steps when it is opened", async () => {
  const { page } = viewer;
  await page.goto(suiteUrl);
  const currentA = defined(historyA.at(-1), 'current A');
  await page.locator('section.group-passed > details > summary').click();
  await page.locator(`#run-${currentA} > summary`).click();
  await page.locator(`li.test[data-run="${currentA}"] .history-rate`).waitFor();
  expect(await markIds(page, `li.test[data-run="${currentA}"]`)).toEqual(historyA.slice(-20));
  expect(await page.locator(`li.test[data-run="${currentA}"] .history-rate`).textContent()).toBe(
    '19 passed first time, 1 flaky of the last 20: 95% passed without a retry (100% with retries)',
  );
});

test("a mark opens that earlier run's page, whose history ends at that run", async () => {
  const { page } = viewer;
  await page.goto(suiteUrl);
  const navigation = page.waitForResponse(
    (r) => r.request().isNavigationRequest() && r.url().includes(`/view/runs/${earlierB8}/`),
  );
  await page.locator(`a[data-history-run="${earlierB8}"]`).click();
  const response = await navigation;
  await page.waitForLoadState();
  expect(response.status()).toBe(200);
  expect(await page.locator('.crumbs code').textContent()).toBe(earlierB8);
  expect(await page.locator('h1').textContent()).toContain('Sign in works');
  // Up to and including the run shown: the 9 suite runs before it, itself last.
  expect(await markIds(page, 'section.history')).toEqual(historyB.slice(0, 9));
  expect(await page.locator(`section.history a[aria-current="true"]`).getAttribute('data-history-run')).toBe(earlierB8);
});

test('every link of the strip opens its run; a tampered token is a 404', async () => {
  const html = await (await fetch(suiteUrl)).text();
  const marks = [...html.matchAll(/<a\s[^>]*data-history-run[^>]*>/g)].map((m) => m[0]);
  const hrefs = marks.map((tag) => defined(/\shref="([^"]+)"/.exec(tag)?.[1], 'href'));
  expect(hrefs).toHaveLength(19);
  for (const href of hrefs) expect((await fetch(`${env.api.origin}${href}`)).status).toBe(200);
  const first = defined(hrefs[0], 'first link');
  const tampered = first.slice(0, -1) + (first.endsWith('A') ? 'B' : 'A');
  expect((await fetch(`${env.api.origin}${tampered}`)).status).toBe(404);
  // A mark's token opens its own run only.
  const [, , runId, token] = first.split('/').slice(1);
  expect(runId).toBeDefined();
  const other = defined(historyB[10], 'another run');
  expect((await fetch(`${env.api.origin}/view/runs/${other}/${defined(token, 'token')}`)).status).toBe(404);
});

test("another workspace's page of a test with the same name and key shows only its own runs", async () => {
  const { page } = viewer;
  await page.goto(suiteRunViewUrl(env.api.origin, env.api.keys.view, ws2SuiteRunId));
  const lastB = defined(ws2B.at(-1), 'ws2 B');
  expect(await markIds(page, `li.test[data-run="${lastB}"]`)).toEqual(ws2B);
  expect(await page.locator(`li.test[data-run="${lastB}"] .history-rate`).textContent()).toBe(
    '2 passed, 1 failed of the last 3: 67% passed',
  );
  const body = await page.content();
  expect([...historyA, ...historyB].filter((id) => body.includes(id))).toEqual([]);
});

describe.each([1440, 390])('at %i px wide', (width) => {
  test('the run page shows the strip, fits the screen, and axe finds no violations', async () => {
    const { page } = viewer;
    await page.setViewportSize({ width, height: 900 });
    const currentB = defined(historyB.at(-1), 'current B');
    await page.goto(runViewUrl(env.api.origin, env.api.keys.view, currentB));
    expect(await markIds(page, 'section.history')).toEqual(historyB.slice(-20));
    expect(await page.getByRole('heading', { level: 2, name: /^History/ }).count()).toBe(1);
    const body = await page.content();
    expect(foreign.filter((id) => body.includes(id))).toEqual([]);
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(width);
    expect((await new AxeBuilder({ page }).analyze()).violations).toEqual([]);
  });

  test('the suite page with its strips, a passed test opened, has no axe violations', async () => {
    const { page } = viewer;
    await page.setViewportSize({ width, height: 900 });
    await page.goto(suiteUrl);
    const currentA = defined(historyA.at(-1), 'current A');
    await page.locator('section.group-passed > details > summary').click();
    await page.locator(`#run-${currentA} > summary`).click();
    await page.locator(`li.test[data-run="${currentA}"] .history-rate`).waitFor();
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(width);
    expect((await new AxeBuilder({ page }).analyze()).violations).toEqual([]);
  });
});
