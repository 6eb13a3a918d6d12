import { request } from 'node:http';
import { brotliDecompressSync } from 'node:zlib';
import AxeBuilder from '@axe-core/playwright';
import { runViewUrl } from '@testrun/core/view-links';
import type { Page } from 'playwright';
import { mixedPlans, type SeededSuite } from './seed';
import { defined, eventually, shownTests, startViewSuite, type ViewEnv, type ViewSuite, type Viewer } from './support';

// The suite page's search and status chips, its layout at a phone's width, and what it weighs on the
// wire, in real Chromium over the mixed suite of the other view tests: 2 passes, 2 failures, an
// error and a disabled test.
let world: ViewSuite;
let env: ViewEnv;
let viewer: Viewer;
let suite: SeededSuite;
let suiteUrl: string;

beforeAll(async () => {
  world = await startViewSuite(mixedPlans({ video: false }));
  ({ env, viewer, suite, suiteUrl } = world);
}, 120_000);

afterAll(() => world.close());

/** Waits until the list shows exactly these tests (the search applies after a short pause). */
function showing(page: Page, names: string[]): Promise<true> {
  return eventually(async () => JSON.stringify(await shownTests(page)) === JSON.stringify(names) || null).then(
    () => true,
  );
}

function chip(page: Page, name: string) {
  return page.locator('.filter-chips').getByRole('link', { name: new RegExp(`^${name} \\d+$`) });
}

test('a status chip narrows the list, shows in the URL and survives a reload', async () => {
  const { page } = viewer;
  await page.goto(suiteUrl);
  expect(await shownTests(page)).toHaveLength(6);
  expect(await chip(page, 'Failed').textContent()).toMatch(/Failed 2/);

  await chip(page, 'Failed').click();
  expect(await shownTests(page)).toEqual(['Sign in works', 'Welcome banner shows']);
  expect(new URL(page.url()).searchParams.get('status')).toBe('failed');
  expect(await page.locator('#filter-note').textContent()).toContain('Showing 2 of 6 tests.');
  // Groups left empty are hidden with their headings.
  expect(await page.locator('section.group:visible h2').allTextContents()).toEqual([expect.stringMatching(/^Failed/)]);

  await page.reload();
  expect(await shownTests(page)).toEqual(['Sign in works', 'Welcome banner shows']);
  expect(await chip(page, 'Failed').getAttribute('aria-current')).toBe('true');
  expect(await chip(page, 'All').getAttribute('aria-current')).toBeNull();

  // From the keyboard: a chip is a link, so Enter picks it.
  await chip(page, 'Error').focus();
  await page.keyboard.press('Enter');
  expect(await shownTests(page)).toEqual(['Checkout completes']);
  expect(new URL(page.url()).searchParams.get('status')).toBe('error');
});

test('the search looks through step labels of tests whose steps are not on the page, and survives a reload', async () => {
  const { page } = viewer;
  await page.goto(suiteUrl);
  // `click "#about-link"` is a step of the passing "Home page loads" (folded, its steps not loaded)
  // and of "Checkout completes" (recorded skipped after its timeout).
  await page.getByLabel('Search tests, steps and errors').fill('about-link');
  await showing(page, ['Checkout completes', 'Home page loads']);
  expect(new URL(page.url()).searchParams.get('q')).toBe('about-link');

  await page.reload();
  expect(await shownTests(page)).toEqual(['Checkout completes', 'Home page loads']);
  expect(await page.getByLabel('Search tests, steps and errors').inputValue()).toBe('about-link');

  // Error text is searched too, and a search combines with a chip.
  await page.getByLabel('Search tests, steps and errors').fill('');
  await chip(page, 'All').click();
  await page.getByLabel('Search tests, steps and errors').fill('nothing matches this');
  await eventually(() => page.locator('.no-match').isVisible());
  await page.locator('.no-match').getByRole('link', { name: 'Show all tests' }).click();
  expect(await shownTests(page)).toHaveLength(6);
  expect(await page.getByLabel('Search tests, steps and errors').inputValue()).toBe('');
});

test('the server renders a filtered URL without the script', async () => {
  const res = await fetch(`${suiteUrl}?status=skipped`);
  const body = await res.text();
  const shown = [...body.matchAll(/<li\s+class="test"\s+data-run="[^"]+"\s+data-status="(\w+)"([^>]*)>/g)]
    .filter((m) => !/\bhidden\b/.test(m[2] ?? ''))
    .map((m) => m[1]);
  expect(shown).toEqual(['skipped']);
  expect(body).toContain('Showing 1 of 6 tests.');
  // An unknown status and an overlong search are no error: the page shows everything, or nothing matching.
  expect((await fetch(`${suiteUrl}?status=bogus&q=${'x'.repeat(5000)}`)).status).toBe(200);
});

test('pages, their script and stylesheet are sent compressed with brotli; artifacts are not', async () => {
  const get = (url: string) =>
    new Promise<{ encoding: string | undefined; body: Buffer }>((resolve, reject) => {
      request(url, { headers: { 'accept-encoding': 'br, gzip' } }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => resolve({ encoding: res.headers['content-encoding'], body: Buffer.concat(chunks) }));
        res.on('error', reject);
      })
        .on('error', reject)
        .end();
    });
  const page = await get(suiteUrl);
  expect(page.encoding).toBe('br');
  expect(brotliDecompressSync(page.body).toString()).toContain('Search tests, steps and errors');
  const css = defined(/href="([^"]+\.css)"/.exec(brotliDecompressSync(page.body).toString())?.[1], 'stylesheet');
  expect((await get(`${env.api.origin}${css}`)).encoding).toBe('br');

  const shot = await env.db.artifact.findFirstOrThrow({ where: { runId: defined(suite.runs[0], 'run 0').id } });
  const runUrl = runViewUrl(env.api.origin, env.api.keys.view, shot.runId);
  expect((await get(`${runUrl}/artifacts/${shot.id}`)).encoding).toBeUndefined();
});

/** For each visible header cell of the step table, the visible cell of the first row under it, as [left, right] pairs. */
function headerColumns(page: Page) {
  return page
    .locator('table.steps')
    .first()
    .evaluate((table: HTMLTableElement) => {
      const visible = (el: Element) => el.getBoundingClientRect().width > 0;
      const box = (el: Element) => {
        const r = el.getBoundingClientRect();
        return [Math.round(r.left), Math.round(r.right)];
      };
      const heads = [...(table.tHead?.rows[0]?.cells ?? [])].filter(visible);
      const cells = [...(table.tBodies[0]?.rows[0]?.cells ?? [])].filter(visible);
      return { heads: heads.map(box), cells: cells.map(box), names: heads.map((h) => h.textContent.trim()) };
    });
}

describe.each([1440, 390])('at %i px wide', (width) => {
  test('the run page step table keeps its headers over their columns, and axe finds no violations', async () => {
    const { page } = viewer;
    await page.setViewportSize({ width, height: 900 });
    const failed = defined(suite.runs[1], 'run 1');
    await page.goto(runViewUrl(env.api.origin, env.api.keys.view, failed.id));
    const { heads, cells, names } = await headerColumns(page);
    expect(heads).toEqual(cells);
    if (width === 390) expect(names).not.toContain('Target');
    // Header cells never overlap one another.
    const overlapping = heads.slice(1).filter(([left], i) => (left ?? 0) < (heads[i]?.[1] ?? 0));
    expect(overlapping).toEqual([]);
    // Nothing is wider than the screen but the table, which scrolls in its own box.
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(width);
    expect((await new AxeBuilder({ page }).analyze()).violations).toEqual([]);
  });

  test('the suite page with a filter applied has no axe violations', async () => {
    const { page } = viewer;
    await page.setViewportSize({ width, height: 900 });
    await page.goto(`${suiteUrl}?status=failed`);
    expect((await new AxeBuilder({ page }).analyze()).violations).toEqual([]);
    // Nothing is wider than the screen.
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(width);
  });
});
