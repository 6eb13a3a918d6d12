import AxeBuilder from '@axe-core/playwright';
import { runViewUrl, suiteRunViewUrl } from '@testrun/core/view-links';
import type { Page } from 'playwright';
import type { SeededSuite } from './seed';
import { defined, eventually, openViewer, startViewEnv, type ViewEnv, type Viewer } from './support';
import { APPROVED_AT, HOSTILE, seedVisualSuite, SNAPSHOTS, TEXT_ACTUAL, TEXT_EXPECTED } from './visual-seed';

// What the view shows of the snapshots runs found against their baselines (docs/VIEW.md, "Visual
// changes"): a run page's images side by side with a comparison slider and the command that
// approves, a suite page's summary, and never a way to approve through the page's link.

let env: ViewEnv;
let suite: SeededSuite;
let viewer: Viewer;
/** Dialogs the pages opened: a script a page's markup ran (a hostile name's onerror) would open one. */
const dialogs: string[] = [];
const runUrl = (position: number) =>
  runViewUrl(env.api.origin, env.api.keys.view, defined(suite.runs[position], `run ${position}`).id);

beforeAll(async () => {
  env = await startViewEnv();
  suite = await seedVisualSuite(env);
  viewer = await openViewer(env);
  viewer.page.on('dialog', (dialog) => {
    dialogs.push(dialog.message());
    void dialog.dismiss();
  });
}, 120_000);

afterAll(async () => {
  await viewer.context.close();
  await env.close();
});

/** The section's changes as the reader sees them: name and badge. */
function changeHeads(page: Page) {
  return page
    .locator('.visual-change-head')
    .evaluateAll((heads) => heads.map((h) => h.textContent.replace(/\s+/g, ' ').trim()));
}

/** The page's HTML holds no way to write: no form, no POST, no approve button. */
async function expectReadOnly(page: Page) {
  const markup = await page.content();
  expect(markup).not.toMatch(/<form\b/i);
  expect(markup).not.toMatch(/method=["']?post/i);
  expect(markup).not.toContain('visual-changes/approve');
  expect(await page.getByRole('button', { name: /approve/i }).count()).toBe(0);
  expect(await page.locator('[formaction], [data-approve]').count()).toBe(0);
}

test("a changed image's run page shows expected, actual and diff, each a link to its image, and the command that approves", async () => {
  const { page } = viewer;
  const url = runUrl(0);
  await page.goto(url);
  const section = page.locator('section.visual-changes');
  expect(await section.locator('h2').textContent()).toBe('Visual changes (2)');
  expect(await changeHeads(page)).toEqual(['home.png Changed', 'label.txt Changed']);
  const home = section.locator('.visual-change', { hasText: 'home.png' });
  expect(await home.locator('.visual-path').textContent()).toBe(`${SNAPSHOTS}/home-chromium-linux.png`);
  const figures = home.locator('.visual-images figure');
  expect(await figures.locator('figcaption').allTextContents()).toEqual(['Expected (the baseline)', 'Actual', 'Diff']);
  const artifacts = await env.db.artifact.findMany({
    where: { runId: suite.runs[0]?.id },
    select: { id: true, name: true },
  });
  const idOf = (name: string) =>
    defined(
      artifacts.find((a) => a.name === name),
      name,
    ).id;
  const links = await figures.locator('a').evaluateAll((as) => as.map((a) => a.getAttribute('href')));
  // Under the run page's own link (signed with the terms of the link it was opened with).
  const runId = defined(suite.runs[0], 'run 0').id;
  const names = ['home-expected.png', 'home-actual.png', 'home-diff.png'];
  expect(links).toHaveLength(names.length);
  for (const [i, n] of names.entries())
    expect(links[i]).toMatch(new RegExp(`^/view/runs/${runId}/[^/]+/artifacts/${idOf(n)}$`));
  for (const link of links) {
    const res = await fetch(`${env.api.origin}${link ?? ''}`);
    expect([res.status, res.headers.get('content-type')]).toEqual([200, 'image/png']);
  }
  const imgs = figures.locator('img');
  expect(await imgs.evaluateAll((list) => list.map((i) => i.getAttribute('loading')))).toEqual([
    'lazy',
    'lazy',
    'lazy',
  ]);
  await imgs.last().scrollIntoViewIfNeeded();
  const widths = () => imgs.evaluateAll((list) => list.map((i) => (i as HTMLImageElement).naturalWidth));
  await eventually(async () => (await widths()).every((w) => w > 0));
  expect(await widths()).toEqual([64, 64, 64]);
  const approve = section.locator('.visual-approve');
  // The command, and the one that prints a link approving in the browser (as the key, for an hour).
  expect(await approve.locator('code.command').allTextContents()).toEqual([
    `testrun approve --run ${suite.runs[0]?.id}`,
    `testrun approve --run ${suite.runs[0]?.id} --link`,
  ]);
  expect((await approve.textContent())?.replace(/\s+/g, ' ')).toContain(
    "This page's link is read-only: it cannot approve.",
  );
  // The section comes before the failure's callout, and the callout names the code.
  const order = await page.evaluate(() => {
    const v = document.querySelector('.visual-changes');
    const c = document.querySelector('.callout');
    return v && c ? v.compareDocumentPosition(c) & Node.DOCUMENT_POSITION_FOLLOWING : 0;
  });
  expect(order).toBeTruthy();
  expect(await page.locator('.callout .code').textContent()).toContain('Screenshot changed');
  await expectReadOnly(page);
  expect((await new AxeBuilder({ page }).analyze()).violations).toEqual([]);
});

test('the slider lays the actual image over the expected one and moves the line; without the script it stays hidden', async () => {
  const { page } = viewer;
  await page.goto(runUrl(0));
  const slider = page.locator('.visual-change', { hasText: 'home.png' }).locator('[data-visual-slider]');
  await eventually(() => slider.isVisible());
  const over = slider.locator('.visual-over');
  expect(await over.evaluate((el) => getComputedStyle(el).clipPath)).toBe('inset(0px 0px 0px 50%)');
  await slider.locator('input[type="range"]').fill('80');
  expect(await over.evaluate((el) => getComputedStyle(el).clipPath)).toBe('inset(0px 0px 0px 80%)');
  expect(await slider.locator('input').getAttribute('aria-valuetext')).toBe('80% expected, 20% actual');
  // Without JavaScript: the images side by side, the slider hidden.
  const context = await (await env.pool.getBrowser()).newContext({ javaScriptEnabled: false });
  try {
    const plain = await context.newPage();
    await plain.goto(runUrl(0));
    const home = plain.locator('.visual-change', { hasText: 'home.png' });
    expect(await home.locator('[data-visual-slider]').isHidden()).toBe(true);
    expect(await home.locator('.visual-images img').evaluateAll((l) => l.map((i) => i.checkVisibility()))).toEqual([
      true,
      true,
      true,
    ]);
  } finally {
    await context.close();
  }
});

test('on a phone the images stack, nothing is wider than the screen, and axe finds nothing', async () => {
  const { page } = viewer;
  await page.setViewportSize({ width: 390, height: 844 });
  try {
    await page.goto(runUrl(0));
    const boxes = await page
      .locator('.visual-change', { hasText: 'home.png' })
      .locator('.visual-images figure')
      .evaluateAll((figures) => figures.map((f) => f.getBoundingClientRect().toJSON() as DOMRect));
    expect(boxes).toHaveLength(3);
    for (const [i, box] of boxes.entries()) {
      expect(box.left).toBeCloseTo(defined(boxes[0], 'the first figure').left, 0);
      if (i > 0) expect(box.top).toBeGreaterThanOrEqual(defined(boxes[i - 1], 'the figure above').bottom);
    }
    expect(await page.evaluate(() => document.documentElement.scrollWidth <= window.innerWidth)).toBe(true);
    expect((await new AxeBuilder({ page }).analyze()).violations).toEqual([]);
  } finally {
    await page.setViewportSize({ width: 1280, height: 900 });
  }
});

test("a text snapshot's expected and actual are shown as escaped text", async () => {
  const { page } = viewer;
  await page.goto(runUrl(0));
  const label = page.locator('.visual-change', { hasText: 'label.txt' });
  expect(await label.locator('pre.visual-text').allTextContents()).toEqual([TEXT_EXPECTED, TEXT_ACTUAL]);
  expect(await label.locator('pre b').count()).toBe(0);
  expect(await label.locator('a[download]').allTextContents()).toEqual([
    'Download label-expected.txt (21 B)',
    'Download label-actual.txt (21 B)',
  ]);
  expect(await label.locator('[data-visual-slider]').count()).toBe(0);
});

test('a new baseline is marked awaiting approval, and shows the image it took', async () => {
  const { page } = viewer;
  await page.goto(runUrl(1));
  expect(await changeHeads(page)).toEqual(['heading.png New baseline — awaiting approval']);
  const figure = page.locator('.visual-change figure');
  expect(await figure.locator('figcaption').allTextContents()).toEqual(['The new baseline']);
  expect(await figure.locator('img').getAttribute('alt')).toBe('heading.png: The new baseline');
  expect(await page.locator('.visual-approve code.command').first().textContent()).toBe(
    `testrun approve --run ${suite.runs[1]?.id}`,
  );
  await expectReadOnly(page);
});

test('an approved change says by whom and when, and asks for nothing', async () => {
  const { page } = viewer;
  await page.goto(runUrl(4));
  expect(await changeHeads(page)).toEqual(['logo.png Approved by ci-deploy 2026-12-07 10:04:31 UTC']);
  expect(await page.locator('.visual-badge time').getAttribute('datetime')).toBe(APPROVED_AT.toISOString());
  expect(await page.locator('.visual-approve').textContent()).toBe('Every change is approved.');
  expect(await page.locator('code.command').count()).toBe(0);
  await expectReadOnly(page);
});

test('a hostile snapshot name is text, never markup', async () => {
  const { page } = viewer;
  await page.goto(runUrl(2));
  expect(await changeHeads(page)).toEqual([`${HOSTILE}.png Changed`]);
  expect(await page.locator('img[src="x"]').count()).toBe(0);
  // As the server sent it: escaped in text and in attributes alike.
  const markup = await (await fetch(runUrl(2))).text();
  expect(markup).not.toContain(HOSTILE);
  expect(markup).toContain('&lt;img src=x onerror=alert(1)&gt;.png');
  // Its images are still found by their attached names and load.
  const imgs = page.locator('.visual-images img');
  expect(await imgs.count()).toBe(3);
  expect(await imgs.first().getAttribute('alt')).toBe(`${HOSTILE}.png: Expected (the baseline)`);
  await page.goto(suiteRunViewUrl(env.api.origin, env.api.keys.view, suite.suiteRunId));
  expect(await page.locator('.visual-names code').allTextContents()).toContain(`${HOSTILE}.png`);
  expect(await page.locator('img[src="x"]').count()).toBe(0);
  expect(await (await fetch(page.url())).text()).not.toContain(HOSTILE);
  expect(dialogs).toEqual([]);
});

test("the suite page lists each test's changes, links to its run page and gives the command that approves them all", async () => {
  const { page } = viewer;
  await page.goto(suiteRunViewUrl(env.api.origin, env.api.keys.view, suite.suiteRunId));
  const section = page.locator('section.visual-changes');
  expect((await section.locator('h2').textContent())?.replace(/\s+/g, ' ').trim()).toBe(
    'Visual changes (4 tests: 3 changed and 1 new awaiting approval, 1 approved)',
  );
  const rows = await section
    .locator('.visual-test')
    .evaluateAll((items) => items.map((li) => li.textContent.replace(/\s+/g, ' ').trim()));
  expect(rows).toEqual([
    'Home looks right 2 changed awaiting approval home.png, label.txt',
    'Heading is new 1 new awaiting approval heading.png',
    `Hostile name 1 changed awaiting approval ${HOSTILE}.png`,
    'Logo approved 1 approved logo.png',
  ]);
  const hrefs = await section.locator('.visual-test a').evaluateAll((as) => as.map((a) => a.getAttribute('href')));
  const listed = [0, 1, 2, 4].map((i) => defined(suite.runs[i], `run ${i}`).id);
  expect(hrefs).toHaveLength(listed.length);
  for (const [i, id] of listed.entries())
    expect(hrefs[i]).toMatch(new RegExp(`^/view/runs/${id}/[^/]+#visual-changes$`));
  for (const href of hrefs) expect((await fetch(`${env.api.origin}${href ?? ''}`)).status).toBe(200);
  expect(await section.locator('.visual-approve code.command').allTextContents()).toEqual([
    `testrun approve --suite-run ${suite.suiteRunId}`,
    `testrun approve --suite-run ${suite.suiteRunId} --link`,
  ]);
  expect(await section.locator('.visual-approve').textContent()).toContain('it cannot approve');
  await expectReadOnly(page);
  expect((await new AxeBuilder({ page }).analyze()).violations).toEqual([]);
});

test("the page's link cannot approve: a POST under it is no route, and nothing changes", async () => {
  for (const url of [runUrl(0), suiteRunViewUrl(env.api.origin, env.api.keys.view, suite.suiteRunId)]) {
    const res = await fetch(`${url}/visual-changes/approve`, { method: 'POST' });
    expect(res.status).toBe(404);
  }
  expect(await env.db.visualChange.count({ where: { approvedAt: { not: null } } })).toBe(1);
});
