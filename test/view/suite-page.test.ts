import { finishRun, runViewUrl, signViewToken, startRun, suiteRunViewUrl, type Db } from '@testrun/core';
import type { Browser, BrowserContext, Locator, Page } from 'playwright-core';
import { testDb } from '../support/harness';
import { launchChromium, measurePng } from './browser';
import { createSuiteRun, executeRun, mixedPlans, STEPS, type SeededSuite } from './seed';
import { startApi } from './server';

// One API process, one browser and one seeded suite for the whole file: a finished suite with a
// pass (with video), a failure, an error, a disabled test and another pass, with real artifacts.
let db: Db;
let api: Awaited<ReturnType<typeof startApi>>;
let browser: Browser;
let context: BrowserContext;
let page: Page;
let suite: SeededSuite;
let other: SeededSuite;
const plans = mixedPlans({ video: true });

beforeAll(async () => {
  db = testDb();
  api = await startApi(db);
  browser = await launchChromium();
  suite = await createSuiteRun(db, api.keys, plans);
  for (const [i, plan] of plans.entries()) {
    if (plan.enabled === false) continue;
    await executeRun(db, api.store, browser, suite.workspaceId, suite.runs[i]!.id, plan);
  }
  // Another workspace's suite, for the cross-tenant checks.
  other = await createSuiteRun(db, api.keys, [plans[0]!]);
  await executeRun(db, api.store, browser, other.workspaceId, other.runs[0]!.id, { ...plans[0]!, video: false });
  context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  page = await context.newPage();
});

afterAll(async () => {
  await context?.close();
  await browser?.close();
  await api?.close();
  await db?.$disconnect();
});

/** Waits for an image to load and decode (rejects when it cannot) and returns its natural width. */
function loadedWidth(img: Locator): Promise<number> {
  return img.evaluate(async (el: HTMLImageElement) => {
    await el.decode();
    return el.naturalWidth;
  });
}

async function suiteRunUrlFromApi(suiteRunId: string, apiKey: string): Promise<string> {
  const res = await fetch(`${api.origin}/api/v1/suite-runs/${suiteRunId}`, {
    headers: { authorization: `Bearer ${apiKey}` },
  });
  expect(res.status).toBe(200);
  const body = (await res.json()) as { suiteRunUrl: string; status: string };
  expect(body.status).toBe('failed');
  return body.suiteRunUrl;
}

test('the suite page shows status, counters, failures first, every test and the failure callout', async () => {
  const url = await suiteRunUrlFromApi(suite.suiteRunId, suite.apiKey);
  expect(url).toBe(suiteRunViewUrl(api.origin, api.keys.view, suite.suiteRunId));
  const res = await page.goto(url);
  expect(res!.status()).toBe(200);

  await expect(page.locator('h1 .chip').textContent()).resolves.toBe('failed');
  const count = (name: string) => page.locator(`[data-count="${name}"]`).textContent();
  expect(await count('total')).toBe('5');
  expect(await count('passed')).toBe('2');
  expect(await count('failed')).toBe('1');
  expect(await count('error')).toBe('1');
  expect(await count('skipped')).toBe('1');

  // Groups in order: what needs attention first.
  const groups = await page.locator('section.group h2').allTextContents();
  expect(groups.map((g) => g.replace(/\s*\(\d+\)/, '').trim())).toEqual(['Failed', 'Errors', 'Skipped', 'Passed']);

  // Every test with its status and summary.
  for (const [i, plan] of plans.entries()) {
    const entry = page.locator(`li[data-run="${suite.runs[i]!.id}"]`);
    const status = plan.enabled === false ? 'skipped' : (plan.outcome?.status ?? 'passed');
    expect(await entry.locator('summary [data-run-status]').textContent()).toBe(status);
    expect(await entry.locator('summary .test-name').textContent()).toBe(plan.name);
    const summary = await entry.locator('summary [data-run-summary]').textContent();
    if (plan.outcome) expect(summary).toContain(plan.outcome.resultSummary);
    if (status === 'skipped') expect(summary).toContain('test_disabled');
    if (status !== 'skipped')
      expect(await entry.locator('summary [data-run-duration]').textContent()).toMatch(/\d+(\.\d)? (ms|s)$/);
  }

  // The failure callout: which test, at which step, why, and the screenshot of that moment.
  const failed = page.locator(`li[data-run="${suite.runs[1]!.id}"]`);
  const callout = failed.locator('.callout-failed');
  expect(await callout.locator('h3').textContent()).toBe('Failed at step 3 of 4: click "text=Sign in"');
  expect(await callout.locator('.why').textContent()).toBe('element "text=Sign in" not found within 1 s');
  expect(await callout.locator('.code code').textContent()).toBe('element_not_found');
  const calloutImg = callout.locator('img');
  await calloutImg.scrollIntoViewIfNeeded();
  expect(await loadedWidth(calloutImg)).toBeGreaterThan(0);

  // The step timeline: three executed steps of four, the failing one marked, bars drawn to scale.
  const rows = failed.locator('table.steps tbody tr.step');
  expect(await rows.count()).toBe(3);
  expect(await rows.nth(2).getAttribute('class')).toContain('step-failed');
  expect(await rows.nth(0).locator('th .action').textContent()).toBe('goto');
  expect((await rows.nth(0).locator('th').textContent())!.trim()).not.toMatch(/^goto\s+goto/);
  expect(await rows.nth(1).locator('.target code').textContent()).toBe('#email');
  expect(await failed.locator('.step-message').textContent()).toBe('element "text=Sign in" not found within 1 s');
  expect(await failed.locator('.timeline').textContent()).toContain('1 later step not run');
  const bars = await rows.evaluateAll((trs) =>
    trs.map((tr) => {
      const fill = tr.querySelector('rect.fill')!;
      return { x: Number(fill.getAttribute('x')), w: Number(fill.getAttribute('width')) };
    }),
  );
  for (const [i, bar] of bars.entries()) {
    expect(bar.x + bar.w).toBeLessThanOrEqual(100.01);
    if (i > 0) expect(bar.x).toBeGreaterThanOrEqual(bars[i - 1]!.x);
  }
  // Every step screenshot thumbnail of the failed run loads.
  const thumbs = failed.locator('table.steps img');
  expect(await thumbs.count()).toBe(3);
  for (let i = 0; i < 3; i++) {
    await thumbs.nth(i).scrollIntoViewIfNeeded();
    expect(await loadedWidth(thumbs.nth(i))).toBeGreaterThan(0);
  }

  // The error run has its own callout, with the step it was cut off at.
  const errored = page.locator(`li[data-run="${suite.runs[2]!.id}"]`);
  expect(await errored.locator('.callout-error h3').textContent()).toBe('Error at step 2 of 3: waitFor ".checkout"');
  expect(await errored.locator('.callout-error .code code').textContent()).toBe('timeout');

  // Passed tests are folded, their steps not rendered until opened.
  const passed = page.locator(`li[data-run="${suite.runs[0]!.id}"] details`);
  expect(await passed.getAttribute('open')).toBeNull();
  expect(await passed.locator('table.steps').count()).toBe(0);

  // The page is not blank: its screenshot has real content.
  await page.evaluate(() => window.scrollTo(0, 0));
  const shot = await page.screenshot({ fullPage: true });
  const measured = await measurePng(await context.newPage(), shot);
  expect(measured.width).toBe(1280);
  expect(measured.height).toBeGreaterThan(900);
  expect(measured.variance).toBeGreaterThan(100);
  expect(measured.colours).toBeGreaterThan(50);
});

test('a passed test opens in place and links to its run page, which shows steps, screenshots and the recording', async () => {
  await page.goto(suiteRunViewUrl(api.origin, api.keys.view, suite.suiteRunId));
  // The passed group is folded while something failed; open it, then the test.
  await page.locator('section.group-passed > details > summary').click();
  const entry = page.locator(`li[data-run="${suite.runs[0]!.id}"]`);
  await entry.locator('summary').click();
  // The steps arrive when the test is opened.
  await entry.locator('table.steps tbody tr.step').first().waitFor();
  expect(await entry.locator('table.steps tbody tr.step').count()).toBe(3);

  await entry.locator('.run-link a').click();
  await page.waitForURL(runViewUrl(api.origin, api.keys.view, suite.runs[0]!.id));
  expect(await page.locator('h1').textContent()).toContain('Home page loads');
  expect(await page.locator('h1 .chip').textContent()).toBe('passed');
  expect(await page.locator('table.steps tbody tr.step').count()).toBe(3);
  const gallery = page.locator('.gallery img');
  expect(await gallery.count()).toBe(3);
  for (let i = 0; i < 3; i++) {
    await gallery.nth(i).scrollIntoViewIfNeeded();
    expect(await loadedWidth(gallery.nth(i))).toBeGreaterThan(0);
  }

  // The video plays from its artifact URL.
  const video = page.locator('video');
  expect(await video.count()).toBe(1);
  const videoSrc = (await video.getAttribute('src'))!;
  expect(
    await video.evaluate(
      (v: HTMLVideoElement) =>
        new Promise<number>((resolve, reject) => {
          if (v.readyState >= 1) return resolve(v.readyState);
          v.addEventListener('loadedmetadata', () => resolve(v.readyState));
          v.addEventListener('error', () => reject(new Error(`video error ${v.error?.code}`)));
        }),
    ),
  ).toBeGreaterThanOrEqual(1);
  const videoRes = await fetch(new URL(videoSrc, api.origin));
  expect(videoRes.status).toBe(200);
  expect(videoRes.headers.get('content-type')).toBe('video/webm');

  // The screenshot as the full-size link opens it.
  const full = await fetch(new URL((await gallery.first().locator('xpath=..').getAttribute('href'))!, api.origin));
  expect(full.headers.get('content-type')).toBe('image/jpeg');
});

test("the trace opens in Playwright's trace viewer and the zip is served as application/zip", async () => {
  await page.goto(runViewUrl(api.origin, api.keys.view, suite.runs[1]!.id));
  const download = page.locator('.trace-links a[download]');
  const zipUrl = new URL((await download.getAttribute('href'))!, api.origin);
  const zip = await fetch(zipUrl);
  expect(zip.status).toBe(200);
  expect(zip.headers.get('content-type')).toBe('application/zip');
  const bytes = Buffer.from(await zip.arrayBuffer());
  expect(bytes.subarray(0, 2).toString()).toBe('PK');

  const viewerHref = (await page.locator('.trace-links a.button').getAttribute('href'))!;
  expect(viewerHref).toContain('/view/trace-viewer/index.html?trace=');
  const viewer = await context.newPage();
  const errors: string[] = [];
  viewer.on('console', (m) => {
    if (m.type() === 'error') errors.push(m.text());
  });
  const res = await viewer.goto(new URL(viewerHref, api.origin).toString());
  expect(res!.status()).toBe(200);
  expect(res!.headers()['content-security-policy']).toContain("worker-src 'self'");
  // The viewer lists the trace's actions once it has loaded the zip through its service worker.
  await viewer.getByText('Fill "someone@example.test"', { exact: false }).first().waitFor({ timeout: 20_000 });
  expect(errors.filter((e) => /Content Security Policy/i.test(e))).toEqual([]);
  await viewer.close();
});

test('pages and artifacts send the security and caching headers', async () => {
  const pageRes = await fetch(suiteRunViewUrl(api.origin, api.keys.view, suite.suiteRunId));
  expect(pageRes.headers.get('content-type')).toMatch(/^text\/html/);
  expect(pageRes.headers.get('cache-control')).toBe('no-store');
  expect(pageRes.headers.get('x-content-type-options')).toBe('nosniff');
  expect(pageRes.headers.get('referrer-policy')).toBe('no-referrer');
  expect(pageRes.headers.get('x-robots-tag')).toContain('noindex');
  const csp = pageRes.headers.get('content-security-policy')!;
  expect(csp).toContain("default-src 'none'");
  expect(csp).toContain("script-src 'self'");
  expect(csp).not.toContain('unsafe-inline');
  const html = await pageRes.text();
  expect(html).not.toMatch(/<script>(?!<\/script>)/); // no inline script
  expect(html).not.toContain(' style="');

  const artifact = await db.artifact.findFirstOrThrow({ where: { runId: suite.runs[1]!.id, kind: 'screenshot' } });
  const url = `${runViewUrl(api.origin, api.keys.view, suite.runs[1]!.id)}/artifacts/${artifact.id}`;
  const res = await fetch(url);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toBe('image/jpeg');
  expect(res.headers.get('cache-control')).toBe('private, max-age=31536000, immutable');
  expect(res.headers.get('x-content-type-options')).toBe('nosniff');
  const etag = res.headers.get('etag')!;
  expect(etag).toBeTruthy();
  expect(Buffer.from(await res.arrayBuffer()).length).toBe(artifact.sizeBytes);
  const again = await fetch(url, { headers: { 'if-none-match': etag } });
  expect(again.status).toBe(304);
  const ranged = await fetch(url, { headers: { range: 'bytes=0-9' } });
  expect(ranged.status).toBe(206);
  expect(ranged.headers.get('content-range')).toBe(`bytes 0-9/${artifact.sizeBytes}`);
  expect(Buffer.from(await ranged.arrayBuffer()).length).toBe(10);

  const status = await fetch(`${suiteRunViewUrl(api.origin, api.keys.view, suite.suiteRunId)}/status.json`);
  expect(status.headers.get('cache-control')).toBe('no-store');
  const body = (await status.json()) as {
    status: string;
    terminal: boolean;
    counts: Record<string, number>;
    runs: unknown[];
  };
  expect(body).toMatchObject({
    status: 'failed',
    terminal: true,
    counts: { total: 5, passed: 2, failed: 1, error: 1, skipped: 1 },
  });
  expect(body.runs).toHaveLength(5);
});

test('a wrong, missing or foreign token is a 404 with the body of an id that does not exist', async () => {
  const good = suiteRunViewUrl(api.origin, api.keys.view, suite.suiteRunId);
  const nonexistent = await fetch(suiteRunViewUrl(api.origin, api.keys.view, 'srun_0000000000aaaaaaaaaaaaaaaa'));
  expect(nonexistent.status).toBe(404);
  const notFoundBody = await nonexistent.text();
  expect(notFoundBody).toContain('Not found');

  const token = signViewToken(api.keys.view, 'suite-run', suite.suiteRunId);
  const runToken = signViewToken(api.keys.view, 'run', suite.runs[1]!.id);
  const artifact = await db.artifact.findFirstOrThrow({ where: { runId: other.runs[0]!.id, kind: 'screenshot' } });
  const ownArtifact = await db.artifact.findFirstOrThrow({ where: { runId: suite.runs[1]!.id, kind: 'screenshot' } });
  const cases = [
    good.replace(token, `${token.slice(0, -1)}${token.endsWith('A') ? 'B' : 'A'}`), // one character off
    good.replace(`/${token}`, ''), // no token
    good.replace(token, runToken), // a run's token on the suite page
    `${api.origin}/view/suite-runs/${other.suiteRunId}/${token}`, // this suite's token on another tenant's suite
    `${api.origin}/view/runs/${other.runs[0]!.id}/${runToken}`, // a run token on another run
    `${api.origin}/view/runs/${suite.runs[1]!.id}/${runToken}/artifacts/${artifact.id}`, // another run's artifact under this run's token
    `${api.origin}/view/runs/${suite.runs[0]!.id}/${signViewToken(api.keys.view, 'run', suite.runs[0]!.id)}/artifacts/${ownArtifact.id}`, // a sibling run's artifact
    `${api.origin}/view/runs/${suite.runs[1]!.id}/${runToken}/status.json`.replace(runToken, token),
    `${good}/nothing-here`,
  ];
  for (const url of cases) {
    const res = await fetch(url);
    expect({ url, status: res.status }).toEqual({ url, status: 404 });
    expect(await res.text()).toBe(notFoundBody);
    expect(res.headers.get('cache-control')).toBe('no-store');
  }
  // And the browser shows it as a page.
  const res = await page.goto(cases[0]!);
  expect(res!.status()).toBe(404);
  expect(await page.locator('h1').textContent()).toBe('Not found');
});

test('a running suite page updates itself to the final state without a reload', async () => {
  const live = await createSuiteRun(db, api.keys, [
    { name: 'Cart keeps items', steps: [STEPS.goto()] },
    { name: 'Coupon applies', steps: [STEPS.goto()] },
  ]);
  const [first, second] = live.runs as unknown as [{ id: string }, { id: string }];
  await page.goto(suiteRunViewUrl(api.origin, api.keys.view, live.suiteRunId));
  expect(await page.locator('h1 .chip').textContent()).toBe('queued');
  expect(await page.locator('main').getAttribute('data-live')).toMatch(/\/status\.json$/);
  // A reload would lose this.
  await page.evaluate(() => {
    (window as unknown as { sameDocument: boolean }).sameDocument = true;
  });
  const chipOf = (runId: string) => `li[data-run="${runId}"] summary [data-run-status]`;

  const a1 = await startRun(db, first.id, 2);
  await page.waitForFunction(([sel]) => document.querySelector(sel!)?.textContent === 'running', [chipOf(first.id)]);
  await page.waitForFunction(() => document.querySelector('h1 .chip')?.textContent === 'running');
  expect(await page.locator('[data-count="running"]').textContent()).toBe('1');

  await finishRun(db, first.id, a1!.attempt, { status: 'passed', resultSummary: 'Passed: 1 step.', durationMs: 1200 });
  await page.waitForFunction(([sel]) => document.querySelector(sel!)?.textContent === 'passed', [chipOf(first.id)]);
  expect(await page.locator(`li[data-run="${first.id}"] [data-run-summary]`).textContent()).toContain(
    'Passed: 1 step.',
  );
  expect(await page.locator(`li[data-run="${first.id}"] [data-run-duration]`).textContent()).toBe('1.2 s');

  const a2 = await startRun(db, second.id, 2);
  await finishRun(db, second.id, a2!.attempt, {
    status: 'failed',
    resultSummary: 'Failed at step 1 (goto "/"): HTTP 500',
    code: 'http_error',
    message: 'the page answered HTTP 500',
    step: 1,
  });
  // Terminal: the final page replaces the live one in place, failures first, and polling stops.
  await page.waitForFunction(() => document.querySelector('h1 .chip')?.textContent === 'failed');
  await page.locator('section.group-failed').waitFor();
  expect(await page.locator('main').getAttribute('data-live')).toBeNull();
  expect(
    await page.locator(`section.group-failed li[data-run="${second.id}"] .callout-failed .why`).textContent(),
  ).toBe('the page answered HTTP 500');
  expect(await page.locator('[data-count="failed"]').textContent()).toBe('1');
  expect(await page.evaluate(() => (window as unknown as { sameDocument?: boolean }).sameDocument)).toBe(true);
  expect(await page.locator('#live-note').textContent()).toContain('failed');
});

test('header values and URL credentials never appear on a page or in its JSON', async () => {
  const secrets = {
    authorization: 'Basic aGRyLXNlY3JldC11c2VyOnB3',
    'x-vercel-protection-bypass': 'bypass-secret-4d2f9a',
  };
  const seeded = await createSuiteRun(db, api.keys, [{ name: 'Preview works', steps: [STEPS.goto()] }], {
    baseUrl: 'https://deploy:url-secret-77@preview.example.test/',
    headers: secrets,
  });
  const runId = seeded.runs[0]!.id;
  await startRun(db, runId, 2);
  // The sealed headers are still on the running row: the view must not read them.
  expect((await db.run.findUniqueOrThrow({ where: { id: runId } })).headersSealed).not.toBeNull();
  const suiteUrl = suiteRunViewUrl(api.origin, api.keys.view, seeded.suiteRunId);
  const runUrl = runViewUrl(api.origin, api.keys.view, runId);
  const bodies = await Promise.all(
    [suiteUrl, `${suiteUrl}/status.json`, runUrl, `${runUrl}/status.json`, `${runUrl}/fragment`].map(async (u) =>
      (await fetch(u)).text(),
    ),
  );
  const runPage = bodies[2]!;
  expect(runPage).toContain('https://***@preview.example.test/');
  for (const body of bodies) {
    for (const value of [
      ...Object.values(secrets),
      'aGRyLXNlY3JldC11c2VyOnB3',
      'url-secret-77',
      'x-vercel-protection-bypass',
    ])
      expect(body).not.toContain(value);
  }
});
