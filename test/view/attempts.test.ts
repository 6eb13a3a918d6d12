import AxeBuilder from '@axe-core/playwright';
import { suiteRunViewUrl } from '@testrun/core/view-links';
import type { Page } from 'playwright';
import { STEPS, type SeededSuite } from './seed';
import { shownTests, startViewSuite, type ViewEnv, type ViewSuite, type Viewer } from './support';

// Retried runs in the view, in real Chromium: a test whose page is broken on its first request
// passes on its retry (flaky), one fails both attempts, one passes at once. The suite page marks and
// filters the flaky one; a retried run's page shows its attempts as tabs.
let world: ViewSuite;
let env: ViewEnv;
let viewer: Viewer;
let suite: SeededSuite;
let runUrl: (position: number) => string;

beforeAll(async () => {
  const key = `attempts-${Date.now()}`;
  world = await startViewSuite([
    { name: 'Stock page settles', retries: 1, steps: [STEPS.flaky(key), STEPS.expectReady()] },
    { name: 'Welcome banner shows', retries: 1, steps: [STEPS.home(), STEPS.expectWelcome()] },
    { name: 'Home page loads', steps: [STEPS.home(), STEPS.expectHeading()] },
  ]);
  ({ env, viewer, suite, runUrl } = world);
}, 120_000);

afterAll(() => world.close());

/** The tabs as a reader of the accessibility tree gets them: name and whether selected. */
async function tabs(page: Page): Promise<Array<[string, boolean]>> {
  const all = await page.getByRole('tab').all();
  return Promise.all(
    all.map(async (t) => [
      (await t.textContent())?.replace(/\s+/g, ' ').trim() ?? '',
      (await t.getAttribute('aria-selected')) === 'true',
    ]),
  );
}

test('the suite page counts, marks and filters the flaky test', async () => {
  const { page } = viewer;
  await page.goto(suiteRunViewUrl(env.api.origin, env.api.keys.view, suite.suiteRunId));
  expect(await page.locator('[data-count="flaky"]').textContent()).toBe('1');
  expect(await page.locator('[data-count="passed"]').textContent()).toBe('2');
  const flakyChip = page.locator('.filter-chips').getByRole('link', { name: /^Flaky \d+$/ });
  expect(await flakyChip.textContent()).toMatch(/Flaky\s+1/);
  // The list marks it in words, not only in colour.
  const marked = await page.locator('li.test:has([data-flaky-mark]) .test-name').allTextContents();
  expect(marked).toEqual(['Stock page settles']);

  await flakyChip.click();
  expect(await shownTests(page)).toEqual(['Stock page settles']);
  expect(new URL(page.url()).searchParams.get('status')).toBe('flaky');
  await page.reload();
  expect(await shownTests(page)).toEqual(['Stock page settles']);

  // The Passed chip still holds both passes.
  await page
    .locator('.filter-chips')
    .getByRole('link', { name: /^Passed \d+$/ })
    .click();
  expect(await shownTests(page)).toEqual(['Home page loads', 'Stock page settles']);
});

test("a flaky run's page shows its attempts as tabs, the last selected, each with its own steps", async () => {
  const { page } = viewer;
  await page.goto(runUrl(0));
  expect(await page.locator('h1').textContent()).toContain('flaky');
  expect(await tabs(page)).toEqual([
    ['Run failed', false],
    ['Retry #1 passed', true],
  ]);
  const first = page.locator('#attempt-0');
  const last = page.locator('#attempt-1');
  expect(await first.isHidden()).toBe(true);
  expect(await last.isVisible()).toBe(true);
  expect(await last.locator('table.steps tbody tr.step').count()).toBe(2);

  // The first attempt failed at its expectation; its panel shows that, with its own screenshots.
  await page.getByRole('tab', { name: /^Run/ }).click();
  expect(await first.isVisible()).toBe(true);
  expect(await last.isHidden()).toBe(true);
  expect(await first.locator('.callout').textContent()).toContain('Failed at step 2');
  expect(new URL(page.url()).hash).toBe('#attempt-0');
  const firstShots = await first.locator('.gallery img').evaluateAll((imgs) => imgs.map((i) => i.getAttribute('src')));
  const lastShots = await last.locator('.gallery img').evaluateAll((imgs) => imgs.map((i) => i.getAttribute('src')));
  expect(firstShots.length).toBeGreaterThan(0);
  expect(lastShots.length).toBeGreaterThan(0);
  expect(firstShots.filter((src) => lastShots.includes(src))).toEqual([]);

  // From the keyboard: the arrow keys move between tabs; a reload keeps the one in the URL.
  await page.getByRole('tab', { name: /^Run/ }).focus();
  await page.keyboard.press('ArrowRight');
  expect(await tabs(page)).toEqual([
    ['Run failed', false],
    ['Retry #1 passed', true],
  ]);
  expect(await page.evaluate(() => document.activeElement?.id)).toBe('attempt-tab-1');
  await page.keyboard.press('ArrowLeft');
  await page.reload();
  expect(await tabs(page)).toEqual([
    ['Run failed', true],
    ['Retry #1 passed', false],
  ]);
});

test('a run that failed every attempt selects its last; a run without retries has no tabs', async () => {
  const { page } = viewer;
  await page.goto(runUrl(1));
  expect(await tabs(page)).toEqual([
    ['Run failed', false],
    ['Retry #1 failed', true],
  ]);
  expect(await page.locator('h1').textContent()).not.toContain('flaky');
  await page.goto(runUrl(2));
  expect(await page.getByRole('tab').count()).toBe(0);
  expect(await page.locator('table.steps tbody tr.step').count()).toBe(2);
});

describe.each([1440, 390])('at %i px', (width) => {
  test('the tabs and the flaky filter have no axe violations and nothing is wider than the screen', async () => {
    const { page } = viewer;
    await page.setViewportSize({ width, height: 900 });
    for (const url of [
      runUrl(0),
      `${suiteRunViewUrl(env.api.origin, env.api.keys.view, suite.suiteRunId)}?status=flaky`,
    ]) {
      await page.goto(url);
      expect((await new AxeBuilder({ page }).analyze()).violations).toEqual([]);
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(width);
    }
  });
});
