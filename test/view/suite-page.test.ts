import { formatDuration, type SuiteRun } from '@testrun/contracts';
import { runViewUrl, suiteRunViewUrl, viewLinkTerms } from '@testrun/core/view-links';
import type { Locator } from 'playwright';
import { measurePng } from './browser';
import { mixedPlans, type SeededSuite } from './seed';
import { defined, readJson, startViewSuite, type ViewEnv, type ViewSuite, type Viewer } from './support';

// One API process, one browser and one suite for the whole file, executed by the worker's own code
// against the fixture shop: a pass (with video), an element not found, a test out of time, a failed
// expectation, a disabled test and another pass, with real step rows, screenshots, trace and video.
let world: ViewSuite;
let env: ViewEnv;
let viewer: Viewer;
let suite: SeededSuite;

beforeAll(async () => {
  world = await startViewSuite(mixedPlans({ video: true }));
  ({ env, viewer, suite } = world);
}, 120_000);

afterAll(() => world.close());

/** The terms of the suite run's links: they expire 30 days after it was created. */
async function suiteTerms() {
  const row = await env.db.suiteRun.findUniqueOrThrow({ where: { id: suite.suiteRunId } });
  return viewLinkTerms({ createdAt: row.createdAt, version: row.viewTokenVersion });
}

/** The seeded run at this position (0-based), with what the worker recorded for it. */
async function recorded(position: number) {
  const run = defined(suite.runs[position], `run ${position}`);
  const row = await env.db.run.findUniqueOrThrow({ where: { id: run.id } });
  const steps = await env.db.stepResult.findMany({ where: { runId: run.id }, orderBy: { index: 'asc' } });
  return { ...run, row, steps };
}

/** Waits for an image to load and decode (rejects when it cannot) and returns its natural width. */
function loadedWidth(img: Locator): Promise<number> {
  return img.evaluate(async (el: HTMLImageElement) => {
    await el.decode();
    return el.naturalWidth;
  });
}

async function text(locator: Locator): Promise<string> {
  return defined(await locator.textContent(), 'an element with text');
}

test('the worker ended each seeded run the way its steps say', async () => {
  const outcomes = await Promise.all(suite.runs.map((_, i) => recorded(i)));
  expect(outcomes.map(({ row }) => [row.status, row.outcomeCode, row.outcomeStep])).toEqual([
    ['passed', null, null],
    ['failed', 'element_not_found', 3],
    ['error', 'timeout', 2],
    ['failed', 'expectation_failed', 2],
    ['skipped', null, null],
    ['passed', null, null],
  ]);
});

test('the suite page shows status, counters, failures first, every test and the failure callout', async () => {
  const res = await fetch(`${env.api.origin}/api/v1/suite-runs/${suite.suiteRunId}`, {
    headers: { authorization: `Bearer ${suite.apiKey}` },
  });
  expect(res.status).toBe(200);
  const body = await readJson<SuiteRun>(res);
  expect(body.status).toBe('failed');
  expect(body.suiteRunUrl).toBe(
    suiteRunViewUrl(env.api.origin, env.api.keys.view, suite.suiteRunId, await suiteTerms()),
  );
  expect((await viewer.page.goto(body.suiteRunUrl))?.status()).toBe(200);

  expect(await text(viewer.page.locator('h1 .chip'))).toBe('failed');
  const count = (name: string) => text(viewer.page.locator(`[data-count="${name}"]`));
  expect(await count('total')).toBe('6');
  expect(await count('passed')).toBe('2');
  expect(await count('failed')).toBe('2');
  expect(await count('error')).toBe('1');
  expect(await count('skipped')).toBe('1');

  // Groups in order: what needs attention first.
  const groups = await viewer.page.locator('section.group h2').allTextContents();
  expect(groups.map((g) => g.replace(/\s*\(\d+\)/, '').trim())).toEqual(['Failed', 'Errors', 'Skipped', 'Passed']);

  // Every test with its status, name, the summary the worker wrote and its duration.
  for (const [i, run] of suite.runs.entries()) {
    const { row } = await recorded(i);
    const entry = viewer.page.locator(`li[data-run="${run.id}"]`);
    expect(await text(entry.locator('summary [data-run-status]'))).toBe(row.status);
    expect(await text(entry.locator('summary .test-name'))).toBe(run.plan.name);
    const summary = await text(entry.locator('summary [data-run-summary]'));
    expect(summary).toContain(row.resultSummary);
    if (row.status === 'skipped') expect(summary).toContain('test_disabled');
    expect(await text(entry.locator('summary [data-run-duration]'))).toBe(formatDuration(row.durationMs));
  }

  // The failure callout: at which step, why (the worker's message), the code, and the screenshot of that moment.
  const signIn = await recorded(1);
  const failed = viewer.page.locator(`li[data-run="${signIn.id}"]`);
  const callout = failed.locator('.callout-failed');
  const failingStep = defined(signIn.steps[2], 'the failing step');
  expect(await text(callout.locator('h3'))).toBe(`Failed at step 3 of 4: ${failingStep.label}`);
  expect(failingStep.label).toBe('click "text=Sign in"');
  expect(await text(callout.locator('.why'))).toBe(signIn.row.outcomeMessage);
  expect(await text(callout.locator('.code code'))).toBe('element_not_found');
  const calloutImg = callout.locator('img');
  await calloutImg.scrollIntoViewIfNeeded();
  expect(await loadedWidth(calloutImg)).toBeGreaterThan(0);

  // The step timeline: all four steps, the failing one marked, the one after it skipped, bars to scale.
  const rows = failed.locator('table.steps tbody tr.step');
  expect(await rows.count()).toBe(4);
  expect(await rows.nth(2).getAttribute('class')).toContain('step-failed');
  expect(await rows.nth(3).getAttribute('class')).toContain('step-skipped');
  expect(await text(rows.nth(0).locator('th .action'))).toBe('goto');
  expect((await text(rows.nth(0).locator('th'))).trim()).not.toMatch(/^goto\s+goto/);
  expect(await text(rows.nth(1).locator('.target code'))).toBe('#name');
  expect(await text(failed.locator('.step-message'))).toBe(failingStep.error);
  expect(await text(failed.locator('.timeline h3'))).toContain('(4 of 4,');
  const bars = await rows.evaluateAll((trs) =>
    trs.map((tr) => {
      const fill = tr.querySelector('rect.fill');
      return { x: Number(fill?.getAttribute('x')), w: Number(fill?.getAttribute('width')) };
    }),
  );
  for (const [i, bar] of bars.entries()) {
    expect(bar.x + bar.w).toBeLessThanOrEqual(100.01);
    if (i > 0) expect(bar.x).toBeGreaterThanOrEqual(defined(bars[i - 1], 'the previous bar').x);
  }
  // Every executed step has a screenshot thumbnail that loads; the skipped one has none.
  const thumbs = failed.locator('table.steps img');
  expect(await thumbs.count()).toBe(3);
  for (let i = 0; i < 3; i++) {
    await thumbs.nth(i).scrollIntoViewIfNeeded();
    expect(await loadedWidth(thumbs.nth(i))).toBeGreaterThan(0);
  }

  // The run out of time has an error callout at the step it was cut off at.
  const checkout = await recorded(2);
  const errored = viewer.page.locator(`li[data-run="${checkout.id}"]`);
  expect(await text(errored.locator('.callout-error h3'))).toBe(
    `Error at step 2 of 3: ${defined(checkout.steps[1], 'step 2').label}`,
  );
  expect(await text(errored.locator('.callout-error .why'))).toBe(checkout.row.outcomeMessage);
  expect(await text(errored.locator('.callout-error .code code'))).toBe('timeout');

  // The failed expectation says what the worker found.
  const welcome = await recorded(3);
  const expectation = viewer.page.locator(`li[data-run="${welcome.id}"] .callout-failed`);
  expect(await text(expectation.locator('.why'))).toBe(welcome.row.outcomeMessage);
  expect(await text(expectation.locator('.code code'))).toBe('expectation_failed');

  // Passed tests are folded, their steps not rendered until opened.
  const passed = viewer.page.locator(`li[data-run="${defined(suite.runs[0], 'run 0').id}"] details`);
  expect(await passed.getAttribute('open')).toBeNull();
  expect(await passed.locator('table.steps').count()).toBe(0);

  // The page is not blank: its screenshot has real content.
  await viewer.page.evaluate(() => window.scrollTo(0, 0));
  const shot = await viewer.page.screenshot({ fullPage: true });
  const measured = await measurePng(await viewer.context.newPage(), shot);
  expect(measured.width).toBe(1280);
  expect(measured.height).toBeGreaterThan(900);
  expect(measured.variance).toBeGreaterThan(100);
  expect(measured.colours).toBeGreaterThan(50);
});

test('a passed test opens in place and links to its run page, which shows steps, screenshots and the recording', async () => {
  const home = await recorded(0);
  await viewer.page.goto(suiteRunViewUrl(env.api.origin, env.api.keys.view, suite.suiteRunId));
  // The passed group is folded while something failed; open it, then the test.
  await viewer.page.locator('section.group-passed > details > summary').click();
  const entry = viewer.page.locator(`li[data-run="${home.id}"]`);
  await entry.locator('summary').click();
  // The steps arrive when the test is opened.
  await entry.locator('table.steps tbody tr.step').first().waitFor();
  expect(await entry.locator('table.steps tbody tr.step').count()).toBe(3);

  await entry.locator('.run-link a').click();
  // Links on a page carry the terms of the link it was opened with (the API's suiteRunUrl).
  await viewer.page.waitForURL(runViewUrl(env.api.origin, env.api.keys.view, home.id, await suiteTerms()));
  expect(await text(viewer.page.locator('h1'))).toContain('Home page loads');
  expect(await text(viewer.page.locator('h1 .chip'))).toBe('passed');
  expect(await text(viewer.page.locator('.summary'))).toBe(home.row.resultSummary);
  expect(await viewer.page.locator('table.steps tbody tr.step').count()).toBe(3);
  const gallery = viewer.page.locator('.gallery img');
  expect(await gallery.count()).toBe(3);
  for (let i = 0; i < 3; i++) {
    await gallery.nth(i).scrollIntoViewIfNeeded();
    expect(await loadedWidth(gallery.nth(i))).toBeGreaterThan(0);
  }

  // The video plays from its artifact URL.
  const video = viewer.page.locator('video');
  expect(await video.count()).toBe(1);
  const videoSrc = defined(await video.getAttribute('src'), 'the video URL');
  expect(
    await video.evaluate(
      (v: HTMLVideoElement) =>
        new Promise<number>((resolve, reject) => {
          if (v.readyState >= 1) return resolve(v.readyState);
          v.addEventListener('loadedmetadata', () => resolve(v.readyState));
          v.addEventListener('error', () => reject(new Error(`video error ${v.error?.code ?? 'unknown'}`)));
        }),
    ),
  ).toBeGreaterThanOrEqual(1);
  const videoRes = await fetch(new URL(videoSrc, env.api.origin));
  expect(videoRes.status).toBe(200);
  expect(videoRes.headers.get('content-type')).toBe('video/webm');

  // The screenshot as the full-size link opens it.
  const fullHref = defined(await gallery.first().locator('xpath=..').getAttribute('href'), 'the full-size link');
  expect((await fetch(new URL(fullHref, env.api.origin))).headers.get('content-type')).toBe('image/jpeg');
});

test("the trace opens in Playwright's trace viewer and the zip is served as application/zip", async () => {
  await viewer.page.goto(runViewUrl(env.api.origin, env.api.keys.view, defined(suite.runs[1], 'run 1').id));
  const zipHref = defined(await viewer.page.locator('.trace-links a[download]').getAttribute('href'), 'the trace link');
  const zip = await fetch(new URL(zipHref, env.api.origin));
  expect(zip.status).toBe(200);
  expect(zip.headers.get('content-type')).toBe('application/zip');
  expect(
    Buffer.from(await zip.arrayBuffer())
      .subarray(0, 2)
      .toString(),
  ).toBe('PK');

  const viewerHref = defined(
    await viewer.page.locator('.trace-links a.button').getAttribute('href'),
    'the viewer link',
  );
  expect(viewerHref).toContain('/view/trace-viewer/index.html?trace=');
  const traceTab = await viewer.context.newPage();
  const errors: string[] = [];
  traceTab.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text());
  });
  const res = defined(await traceTab.goto(new URL(viewerHref, env.api.origin).toString()), 'the viewer response');
  expect(res.status()).toBe(200);
  expect(res.headers()['content-security-policy']).toContain("worker-src 'self'");
  // The viewer lists the trace's steps once it has read the zip (by ranges) through its service
  // worker; a step opened shows the actions it made.
  const step = traceTab.getByText('2. fill "#name"', { exact: true }).first();
  await step.waitFor({ timeout: 20_000 });
  await step.click();
  await traceTab.keyboard.press('ArrowRight');
  await traceTab.getByText('Fill "Ada Lovelace"', { exact: false }).first().waitFor({ timeout: 5_000 });
  expect(errors.filter((e) => /Content Security Policy/i.test(e))).toEqual([]);
  await traceTab.close();
});

test('an address that opens nothing shows the not-found page, styled, in the browser', async () => {
  const url = suiteRunViewUrl(env.api.origin, env.api.keys.view, suite.suiteRunId).replace(/.$/, (c) =>
    c === 'A' ? 'B' : 'A',
  );
  expect((await viewer.page.goto(url))?.status()).toBe(404);
  expect(await text(viewer.page.locator('h1'))).toBe('Not found');
  // The hashed stylesheet applied under the page's CSP: the skip link is moved off screen.
  expect(await viewer.page.locator('.skip-link').evaluate((el) => getComputedStyle(el).position)).toBe('absolute');
});
