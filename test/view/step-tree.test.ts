import type { Db } from '@testrun/core/db';
import { ID_PREFIX, newId } from '@testrun/core/ids';
import { runViewUrl } from '@testrun/core/view-links';
import type { Page } from 'playwright';
import { createSuiteRun, STEPS } from './seed';
import { openViewer, startViewEnv, type ViewEnv, type Viewer } from './support';

// A Playwright run's step table folds as Playwright's report folds it, in real Chromium: hooks and
// fixtures with steps inside are folded unless the failing path goes through them, a test.step's
// nesting shows, each fold opens and closes with its button, and without the page's script every
// row shows. The run's step rows are written as the worker writes a Playwright test's tree.

type Row = [category: string, label: string, depth: number, outcome?: 'passed' | 'failed' | 'error'];

/** The tree of a test that failed inside a test.step of its page object (as a real run recorded it). */
const TREE: Row[] = [
  ['hook', 'Before Hooks', 0],
  ['hook', 'beforeEach hook', 1],
  ['fixture', 'Fixture "browser"', 2],
  ['pw:api', 'Launch browser', 3],
  ['fixture', 'Fixture "shop"', 1],
  ['pw:api', 'Set content', 2],
  ['expect', 'Expect "toHaveText"', 0],
  ['test.step', 'buy it', 0, 'error'],
  ['pw:api', 'Click', 1],
  ['expect', 'Expect "toHaveText"', 1, 'failed'],
  ['hook', 'After Hooks', 0],
  ['fixture', 'Fixture "page"', 1],
  ['pw:api', 'Close context', 2],
];

let env: ViewEnv;
let viewer: Viewer;
let url: string;

async function seedPlaywrightRun(db: Db): Promise<string> {
  const suite = await createSuiteRun(db, env.api.keys, [{ name: 'buys', steps: [STEPS.home()] }], {
    baseUrl: env.site.url,
  });
  const runId = suite.runs[0]?.id ?? '';
  const startedAt = new Date(Date.now() - 5_000);
  await db.run.update({
    where: { id: runId },
    data: {
      status: 'failed',
      attempt: 1,
      outcomeCode: 'expectation_failed',
      outcomeStep: 10,
      resultSummary: 'Failed at step 10 (Expect "toHaveText"): Error: expect(locator).toHaveText(expected) failed',
      startedAt,
      finishedAt: new Date(startedAt.getTime() + 3_000),
      durationMs: 3_000,
    },
  });
  await db.stepResult.createMany({
    data: TREE.map(([category, label, depth, outcome = 'passed'], i) => ({
      id: newId(ID_PREFIX.step),
      runId,
      attempt: 1,
      index: i + 1,
      action: null,
      category,
      depth,
      label,
      target: '',
      location: 'tests/po.ts:9',
      outcome,
      error: outcome === 'passed' ? null : 'Error: expect(locator).toHaveText(expected) failed',
      startedAt: new Date(startedAt.getTime() + i * 100),
      durationMs: 100,
    })),
  });
  return runViewUrl(env.api.origin, env.api.keys.view, runId);
}

beforeAll(async () => {
  env = await startViewEnv();
  viewer = await openViewer(env);
  url = await seedPlaywrightRun(env.db);
}, 120_000);

afterAll(async () => {
  await viewer.context.close();
  await env.close();
});

/** The numbers of the step rows a reader sees. */
async function shownRows(page: Page): Promise<number[]> {
  const numbers = await page.locator('table.steps tr.step:visible td.num:first-child').allTextContents();
  return numbers.map((n) => Number(n.trim()));
}

test('hooks and fixtures are folded, the failing path and test.step nesting open, each fold a button', async () => {
  const { page } = viewer;
  await page.goto(url);
  expect(await shownRows(page)).toEqual([1, 7, 8, 9, 10, 11]);
  // The summary's step is the row of that number.
  expect(await page.locator('table.steps tr.step', { hasText: 'buy it' }).locator('td.num').first().textContent()).toBe(
    '8',
  );

  const before = page.locator('table.steps tr.step').nth(0).getByRole('button');
  expect(await before.getAttribute('aria-expanded')).toBe('false');
  await before.click();
  expect(await before.getAttribute('aria-expanded')).toBe('true');
  // Its own hook and fixture stay folded inside it.
  expect(await shownRows(page)).toEqual([1, 2, 5, 7, 8, 9, 10, 11]);
  await page.locator('table.steps tr.step').nth(1).getByRole('button').click();
  expect(await shownRows(page)).toEqual([1, 2, 3, 5, 7, 8, 9, 10, 11]);
  await before.click();
  expect(await shownRows(page)).toEqual([1, 7, 8, 9, 10, 11]);
});

test('without the page script every row shows, and no fold button', async () => {
  const context = await (await env.pool.getBrowser()).newContext({ javaScriptEnabled: false });
  try {
    const page = await context.newPage();
    await page.goto(url);
    expect(await shownRows(page)).toEqual(TREE.map((_, i) => i + 1));
    expect(await page.locator('table.steps button.fold:visible').count()).toBe(0);
  } finally {
    await context.close();
  }
});
