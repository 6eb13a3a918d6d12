/**
 * Markup from every source a tenant controls reaches the view as text, never as code: test names,
 * step texts (selectors, expected texts, filled values) and the target page's own content, which a
 * failed expectation quotes. Runs are executed by the worker's own code in real Chromium, and the
 * view is read in real Chromium: no script of the payloads may run, no dialog may open.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { runViewUrl, suiteRunViewUrl } from '@testrun/core/view-links';
import { createSuiteRun, executeSuite, type RunPlan, type SeededSuite } from '../view/seed';
import { defined, openViewer, startViewEnv, type ViewEnv, type Viewer } from '../view/support';

const NAME_PAYLOAD = `Checkout <img src=x onerror="window.__xss='name'"><script>window.__xss='name'</script>`;
const TEXT_PAYLOAD = `"><svg onload="window.__xss='text'">`;
/** A valid selector (an attribute match) that matches nothing and carries markup in its value. */
const SELECTOR_PAYLOAD = `[title="<img src=x onerror=window.__xss='selector'>"]`;
const VALUE_PAYLOAD = `<script>window.__xss='value'</script>`;
/** What the target page's heading says, as text: its source escapes it, so textContent carries the tag. */
const PAGE_PAYLOAD = `<img src=x onerror="window.__xss='page'">`;

const escapeHtml = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

let env: ViewEnv;
let target: Server;
let suite: SeededSuite;
let viewer: Viewer;
const dialogs: string[] = [];

beforeAll(async () => {
  // The target: a loopback page whose heading carries markup as text (it would run if a page
  // echoed it unescaped) and a form the steps fill.
  target = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end(
      `<!doctype html><title>${escapeHtml(PAGE_PAYLOAD)}</title><h1>${escapeHtml(PAGE_PAYLOAD)}</h1>` +
        `<label>Name <input id="name"></label>`,
    );
  });
  await new Promise<void>((resolve) => target.listen(0, '127.0.0.1', resolve));
  const baseUrl = `http://127.0.0.1:${(target.address() as AddressInfo).port}`;

  env = await startViewEnv();
  const plans: RunPlan[] = [
    {
      name: NAME_PAYLOAD,
      steps: [
        { action: 'goto', url: '/' },
        { action: 'fill', selector: '#name', value: VALUE_PAYLOAD },
        { action: 'expectText', selector: 'h1', text: TEXT_PAYLOAD, timeoutMs: 1_000 },
      ],
    },
    {
      name: `${NAME_PAYLOAD} (missing element)`,
      steps: [
        { action: 'goto', url: '/' },
        { action: 'click', selector: SELECTOR_PAYLOAD, timeoutMs: 1_000 },
      ],
    },
    { name: `${NAME_PAYLOAD} (passes)`, steps: [{ action: 'goto', url: '/' }] },
  ];
  suite = await createSuiteRun(env.db, env.api.keys, plans, { baseUrl });
  await executeSuite(env.worker, suite);
  viewer = await openViewer(env);
  viewer.page.on('dialog', (dialog) => {
    dialogs.push(dialog.message());
    void dialog.dismiss();
  });
}, 120_000);

afterAll(async () => {
  await viewer.context.close();
  await env.close();
  await new Promise((resolve) => target.close(resolve));
});

async function expectNoScriptRan(): Promise<void> {
  const ran = await viewer.page.evaluate(() => (window as unknown as { __xss?: string }).__xss ?? null);
  expect(ran).toBeNull();
  expect(dialogs).toEqual([]);
}

test('the failures really quote the payloads (so the view has markup to show)', async () => {
  const [expectation, missing] = await Promise.all(
    suite.runs.slice(0, 2).map((r) => env.db.run.findUniqueOrThrow({ where: { id: r.id } })),
  );
  expect(expectation?.status).toBe('failed');
  expect(expectation?.resultSummary).toContain(PAGE_PAYLOAD);
  expect(missing?.status).toBe('failed');
  expect(missing?.resultSummary).toContain(SELECTOR_PAYLOAD);
});

test('the suite page shows names and failure texts as text and runs none of them', async () => {
  await viewer.page.goto(suiteRunViewUrl(env.api.origin, env.api.keys.view, suite.suiteRunId));
  // Open every collapsed test, so fragments fetched on demand are rendered too.
  const details = viewer.page.locator('details');
  for (let i = 0; i < (await details.count()); i++) {
    const one = details.nth(i);
    if ((await one.getAttribute('open')) === null) await one.locator('summary').first().click();
  }
  await viewer.page.waitForLoadState('networkidle');
  const text = await viewer.page.locator('body').innerText();
  expect(text).toContain(NAME_PAYLOAD);
  expect(text).toContain(PAGE_PAYLOAD);
  expect(await viewer.page.locator('main img[src="x"], main svg[onload]').count()).toBe(0);
  await expectNoScriptRan();
});

test('each run page shows step labels, targets, values and errors as text and runs none of them', async () => {
  for (const run of suite.runs) {
    await viewer.page.goto(runViewUrl(env.api.origin, env.api.keys.view, run.id));
    await viewer.page.waitForLoadState('networkidle');
    const text = await viewer.page.locator('body').innerText();
    expect(text).toContain(defined(run.plan.name, 'the test name'));
    await expectNoScriptRan();
  }
  await viewer.page.goto(runViewUrl(env.api.origin, env.api.keys.view, defined(suite.runs[1], 'run 2').id));
  expect(await viewer.page.locator('body').innerText()).toContain(SELECTOR_PAYLOAD);
});
