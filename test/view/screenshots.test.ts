import AxeBuilder from '@axe-core/playwright';
import { runViewUrl, suiteRunViewUrl } from '@testrun/core/view-links';
import type { Locator, Page } from 'playwright';
import { createSuiteRun, executeSuite, STEPS, type SeededSuite } from './seed';
import { defined, eventually, startViewEnv, type ViewEnv, openViewer, type Viewer } from './support';

// The screenshots of a run: thumbnails wide enough to read, and the full-size viewer that steps
// through one run's screenshots, the failure's first, in real Chromium. The seeded suite keeps a
// screenshot of every step it executes: a failure at step 3 of 4 (the 4th is recorded skipped, with
// no screenshot), a failure at step 2 of 2 and a pass of 2 steps.
let env: ViewEnv;
let viewer: Viewer;
let suite: SeededSuite;
/** A suite of one test that fails twice: its run page has a section per test attempt. */
let retried: SeededSuite;

/** A run's screenshots as the worker stored them: artifact id by step number. */
type Shots = Map<number, string>;
const shots = new Map<string, Shots>();

beforeAll(async () => {
  env = await startViewEnv();
  suite = await createSuiteRun(
    env.db,
    env.api.keys,
    [
      { name: 'Sign in works', steps: [STEPS.home(), STEPS.fillName(), STEPS.clickSignIn(), STEPS.expectHeading()] },
      { name: 'Welcome banner shows', steps: [STEPS.home(), STEPS.expectWelcome()] },
      { name: 'Order form takes a name', steps: [STEPS.home(), STEPS.fillName()] },
    ],
    { baseUrl: env.site.url },
  );
  await executeSuite(env.worker, suite);
  for (const run of suite.runs) {
    const rows = await env.db.artifact.findMany({ where: { runId: run.id, kind: 'screenshot' } });
    shots.set(run.id, new Map(rows.map((r) => [defined(r.stepIndex, 'step of a screenshot'), r.id])));
  }
  retried = await createSuiteRun(
    env.db,
    env.api.keys,
    [{ name: 'Always wrong', steps: [STEPS.home(), STEPS.expectWelcome()] }],
    { baseUrl: env.site.url, retries: 1 },
  );
  await executeSuite(env.worker, retried);
  viewer = await openViewer(env);
}, 120_000);

afterAll(async () => {
  await viewer.context.close();
  await env.close();
});

function run(i: number) {
  return defined(suite.runs[i], `run ${i}`);
}

function shot(runIndex: number, step: number): string {
  return defined(shots.get(run(runIndex).id)?.get(step), `the screenshot of step ${step} of run ${runIndex}`);
}

/** What the open viewer shows: the artifact id its image loads, its caption and position. */
async function showing(page: Page) {
  const dialog = page.locator('dialog.viewer');
  const src = defined(await dialog.locator('img.viewer-img').getAttribute('src'), 'the image source');
  return {
    artifact: src.split('/').at(-1),
    runId: src.split('/').at(-4),
    caption: (await dialog.locator('.viewer-caption').textContent()) ?? '',
    position: (await dialog.locator('.viewer-pos').textContent()) ?? '',
  };
}

/** Waits until the viewer's image has loaded, and gives its natural width. */
function loadedWidth(page: Page): Promise<number> {
  return eventually(() =>
    page
      .locator('dialog.viewer img.viewer-img')
      .evaluate((img: HTMLImageElement) => (img.complete && img.naturalWidth > 0 ? img.naturalWidth : 0)),
  );
}

function isOpen(page: Page): Promise<boolean> {
  return page.locator('dialog.viewer').evaluate((d: HTMLDialogElement) => d.open && d.matches(':modal'));
}

/** Whether the element has the page's focus. */
function focused(target: Locator): Promise<boolean> {
  return target.evaluate((el) => el === document.activeElement);
}

test('thumbnails are links to the full image that the server marks for the viewer, one sequence per run', async () => {
  const body = await (await fetch(runViewUrl(env.api.origin, env.api.keys.view, run(0).id))).text();
  const links = [...body.matchAll(/<a\s+class="shot shot-\w+"\s+href="([^"]+)"[^>]*data-viewer="([^"]+)"/g)];
  // The callout, the three step rows and the gallery of three.
  expect(links).toHaveLength(7);
  expect(new Set(links.map((m) => m[2]))).toEqual(new Set([`${run(0).id}:0`]));
  for (const [, href] of links)
    expect((await fetch(`${env.api.origin}${href}`)).headers.get('content-type')).toMatch(/^image\//);
  expect(body).toContain(`data-viewer-caption="Step 3 of 4: click &quot;text=Sign in&quot; (failed)"`);
});

describe.each([1440, 390])('at %i px wide', (width) => {
  test('on a failed run page the viewer starts at the failure and steps through the screenshots', async () => {
    const { page } = viewer;
    await page.setViewportSize({ width, height: 900 });
    await page.goto(runViewUrl(env.api.origin, env.api.keys.view, run(0).id));

    // Thumbnails are wide enough to read: in the gallery at least 160 px, in the step table too but
    // on a phone, where they are as wide as the table leaves room for, so it fits the screen whole.
    const widthsOf = (selector: string) =>
      page.locator(selector).evaluateAll((imgs) => imgs.map((i) => Math.round(i.getBoundingClientRect().width)));
    const gallery = await widthsOf('.gallery a.shot img');
    const table = await widthsOf('table.steps a.shot img');
    expect(gallery).toHaveLength(3);
    expect(table).toHaveLength(3);
    for (const w of gallery) expect(w).toBeGreaterThanOrEqual(160);
    for (const w of table) expect(w).toBeGreaterThanOrEqual(width < 720 ? 88 : 160);
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(width);
    const wrap = page.locator('.timeline .table-wrap');
    expect(await wrap.evaluate((el) => el.scrollWidth - el.clientWidth)).toBeLessThanOrEqual(0);

    // Opened from the step 1 row, the viewer is at step 1, second after the failure.
    const row1 = page.locator('table.steps tr.step').nth(0).locator('a.shot');
    await row1.click();
    expect(await isOpen(page)).toBe(true);
    expect(await showing(page)).toMatchObject({ artifact: shot(0, 1), position: '2 of 3' });
    await page.keyboard.press('Escape');
    expect(await isOpen(page)).toBe(false);
    expect(await focused(row1)).toBe(true);

    // Opened from the failure's callout: the failing step's screenshot comes first.
    const callout = page.locator('.callout-shot a.shot');
    await callout.click();
    const dialog = page.getByRole('dialog', { name: 'Screenshots of Sign in works' });
    expect(await dialog.isVisible()).toBe(true);
    expect(await showing(page)).toEqual({
      artifact: shot(0, 3),
      runId: run(0).id,
      caption: 'Step 3 of 4: click "text=Sign in" (failed)',
      position: '1 of 3',
    });
    expect(await loadedWidth(page)).toBe(1280);
    expect(await dialog.getByRole('link', { name: 'Open the image in a new tab' }).getAttribute('href')).toBe(
      await callout.getAttribute('href'),
    );
    // The full-size image fits the screen.
    const box = defined(await dialog.locator('img.viewer-img').boundingBox(), 'the image box');
    expect(box.x).toBeGreaterThanOrEqual(0);
    expect(box.x + box.width).toBeLessThanOrEqual(width);
    expect(box.y + box.height).toBeLessThanOrEqual(900);

    expect((await new AxeBuilder({ page }).analyze()).violations).toEqual([]);

    // Next and → go on through the others in step order; Previous and ← come back; it wraps around.
    await dialog.getByRole('button', { name: 'Next' }).click();
    expect(await showing(page)).toMatchObject({
      artifact: shot(0, 1),
      position: '2 of 3',
      caption: 'Step 1 of 4: goto "/" (passed)',
    });
    expect(await loadedWidth(page)).toBeGreaterThan(0);
    await page.keyboard.press('ArrowRight');
    expect(await showing(page)).toMatchObject({ artifact: shot(0, 2), position: '3 of 3' });
    await page.keyboard.press('ArrowLeft');
    expect(await showing(page)).toMatchObject({ artifact: shot(0, 1), position: '2 of 3' });
    await dialog.getByRole('button', { name: 'Previous' }).click();
    expect(await showing(page)).toMatchObject({ artifact: shot(0, 3), position: '1 of 3' });
    await page.keyboard.press('ArrowLeft');
    expect(await showing(page)).toMatchObject({ artifact: shot(0, 2), position: '3 of 3' });

    // While it is open, the rest of the page is inert: Tab never reaches anything outside the
    // dialog (past its last control focus goes to the browser, then back into the dialog).
    const reached = new Set<string>();
    for (let i = 0; i < 6; i += 1) {
      await page.keyboard.press('Tab');
      const where = await page.evaluate(() => {
        const el = document.activeElement;
        if (el === null || el === document.body) return 'browser';
        return el.closest('dialog.viewer') ? el.textContent.trim() : `outside: ${el.outerHTML.slice(0, 80)}`;
      });
      expect(where).not.toMatch(/^outside/);
      reached.add(where);
    }
    expect([...reached].filter((w) => w !== 'browser').sort()).toEqual([
      'Close',
      'Next →',
      'Open the image in a new tab',
      '← Previous',
    ]);

    await page.keyboard.press('Escape');
    expect(await isOpen(page)).toBe(false);
    expect(await focused(callout)).toBe(true);
  });

  test('on the suite page each run has its own sequence, the failure first', async () => {
    const { page } = viewer;
    await page.setViewportSize({ width, height: 900 });
    await page.goto(suiteRunViewUrl(env.api.origin, env.api.keys.view, suite.suiteRunId));

    const test = page.locator(`li.test[data-run="${run(1).id}"]`);
    const thumb = test.locator('.callout-shot a.shot');
    await thumb.click();
    const dialog = page.getByRole('dialog', { name: 'Screenshots of Welcome banner shows' });
    expect(await dialog.isVisible()).toBe(true);
    expect(await showing(page)).toEqual({
      artifact: shot(1, 2),
      runId: run(1).id,
      caption: expect.stringMatching(/^Step 2 of 2: expectText .*\(failed\)$/) as unknown,
      position: '1 of 2',
    });
    expect(await loadedWidth(page)).toBe(1280);
    expect((await new AxeBuilder({ page }).analyze()).violations).toEqual([]);

    // Through the whole sequence and around: this run's two screenshots only.
    const seen: Array<string | undefined> = [];
    for (let i = 0; i < 3; i += 1) {
      await page.keyboard.press('ArrowRight');
      const now = await showing(page);
      expect(now.runId).toBe(run(1).id);
      seen.push(now.artifact);
    }
    expect(seen).toEqual([shot(1, 1), shot(1, 2), shot(1, 1)]);

    await dialog.getByRole('button', { name: 'Close' }).click();
    expect(await isOpen(page)).toBe(false);
    expect(await focused(thumb)).toBe(true);

    // The other failed run opens its own sequence, from the keyboard too.
    await page
      .locator(`li.test[data-run="${run(0).id}"] table.steps tr.step`)
      .nth(1)
      .locator('a.shot')
      .focus();
    await page.keyboard.press('Enter');
    expect(await isOpen(page)).toBe(true);
    expect(await showing(page)).toMatchObject({ artifact: shot(0, 2), runId: run(0).id, position: '3 of 3' });
    await page.keyboard.press('Escape');

    // A passed test's steps, loaded in place when it is opened, step through in step order.
    await page.locator('section.group-passed summary').first().click();
    const passed = page.locator(`li.test[data-run="${run(2).id}"]`);
    await passed.locator('summary').first().click();
    await passed.locator('table.steps a.shot').first().click();
    expect(await showing(page)).toMatchObject({
      artifact: shot(2, 1),
      runId: run(2).id,
      position: '1 of 2',
      caption: 'Step 1 of 2: goto "/" (passed)',
    });
    await page.keyboard.press('ArrowRight');
    expect(await showing(page)).toMatchObject({ artifact: shot(2, 2), position: '2 of 2' });
    await page.keyboard.press('Escape');
    expect(await isOpen(page)).toBe(false);
  });
});

test("on a retried run's page each test attempt has its own sequence", async () => {
  const { page } = viewer;
  await page.setViewportSize({ width: 1440, height: 900 });
  const runId = defined(retried.runs[0], 'the retried run').id;
  const rows = await env.db.artifact.findMany({ where: { runId, kind: 'screenshot' } });
  const of = (attempt: number, step: number) =>
    defined(rows.find((r) => r.attempt === attempt && r.stepIndex === step)?.id, `attempt ${attempt}, step ${step}`);
  await page.goto(runViewUrl(env.api.origin, env.api.keys.view, runId));

  // Each attempt is a tab; its panel's callout opens that attempt's screenshots.
  for (const [retry, attempt] of [
    [1, 2],
    [0, 1],
  ] as const) {
    await page.locator(`#attempt-tab-${retry}`).click();
    const thumb = page.locator(`#attempt-${retry} .callout-shot a.shot`);
    await thumb.click();
    expect(
      await page.getByRole('dialog', { name: `Screenshots of Always wrong, attempt ${attempt}` }).isVisible(),
    ).toBe(true);
    expect(await showing(page)).toMatchObject({ artifact: of(attempt, 2), position: '1 of 2' });
    await page.keyboard.press('ArrowRight');
    expect(await showing(page)).toMatchObject({ artifact: of(attempt, 1), position: '2 of 2' });
    await page.keyboard.press('Escape');
    expect(await focused(thumb)).toBe(true);
  }
  // Each panel's gallery is its own attempt's.
  await page.locator('#attempt-tab-1').click();
  await page.locator('#attempt-1 .gallery a.shot').first().click();
  expect(await showing(page)).toMatchObject({ artifact: of(2, 1), position: '2 of 2' });
  await page.keyboard.press('Escape');
});
