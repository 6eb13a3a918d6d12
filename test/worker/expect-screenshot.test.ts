import type { BrowserContext, Page } from 'playwright';
import type { Step } from '@testrun/contracts';
import { BrowserPool } from '../../apps/worker/src/browser/browser-pool';
import { executeStep, type StepContext } from '../../apps/worker/src/executors/steps/execute-step';
import type { StepBaseline, StepVisuals } from '../../apps/worker/src/executors/steps/types';

/**
 * The `expectScreenshot` action in real Chromium, its baselines held in memory: what it settles
 * (animations, the caret, masked content), what it compares, and how it words what does not pass.
 * test/e2e/steps-visual.test.ts runs it through the API and the worker, baselines in Postgres.
 */
jest.setTimeout(60_000);

/** Baselines by name, and what the steps kept. */
class MemoryVisuals implements StepVisuals {
  readonly baselines = new Map<string, Buffer>();
  readonly kept: Array<{ kind: 'new' | 'changed'; name: string; diff?: Buffer | null }> = [];
  baseline(name: string): Promise<StepBaseline> {
    return Promise.resolve({
      name: `${name}.png`,
      path: `/steps/s/t/${name}.png`,
      expected: this.baselines.get(name) ?? null,
    });
  }
  keepNew(baseline: StepBaseline, actual: Buffer): void {
    this.kept.push({ kind: 'new', name: baseline.name });
    this.baselines.set(baseline.name.replace(/\.png$/, ''), actual);
  }
  keepChanged(baseline: StepBaseline, found: { actual: Buffer; diff: Buffer | null }): void {
    this.kept.push({ kind: 'changed', name: baseline.name, diff: found.diff });
  }
}

let pool: BrowserPool;
let context: BrowserContext;
let page: Page;
let visual: MemoryVisuals;

beforeAll(() => {
  pool = new BrowserPool();
});

afterAll(async () => {
  await pool.close();
});

beforeEach(async () => {
  context = await pool.newContext({ viewport: { width: 400, height: 300 } });
  page = await context.newPage();
  visual = new MemoryVisuals();
});

afterEach(async () => {
  await context.close();
});

const ctx = (overrides: Partial<StepContext> = {}): StepContext => ({
  baseUrl: 'http://127.0.0.1:2',
  deadline: Date.now() + 30_000,
  visual,
  ...overrides,
});
const compare = (fields: Partial<Extract<Step, { action: 'expectScreenshot' }>> = {}) =>
  executeStep(page, { action: 'expectScreenshot', name: 'home', ...fields }, ctx());

const banner = (colour: string, extra = '') =>
  `<style>body{margin:0;font-family:sans-serif} #banner{height:80px;background:${colour}}</style>
  <div id="banner"></div><h1>Shop</h1>${extra}`;

it('keeps a first screenshot as the baseline, matches it after, and fails a changed page with its diff', async () => {
  await page.setContent(banner('teal'));
  expect(await compare()).toMatchObject({ outcome: 'passed', target: 'viewport' });
  expect(await compare()).toMatchObject({ outcome: 'passed' });
  await page.setContent(banner('crimson'));
  const changed = await compare();
  expect(changed).toMatchObject({ outcome: 'failed', code: 'screenshot_changed' });
  expect(changed.message).toMatch(
    /^home\.png differs from its baseline: \d+ pixels \(ratio 0\.\d\d of all image pixels\) are different$/,
  );
  expect(visual.kept.map((k) => [k.kind, k.name])).toEqual([
    ['new', 'home.png'],
    ['changed', 'home.png'],
  ]);
  expect(visual.kept[1]?.diff?.subarray(1, 4).toString('ascii')).toBe('PNG');
  // What the step allows: every pixel of the banner may differ.
  expect(await compare({ maxDiffPixelRatio: 0.5 })).toMatchObject({ outcome: 'passed' });
});

it('settles what moves by itself: an endless animation and a blinking caret', async () => {
  await page.setContent(
    banner(
      'teal',
      `<style>@keyframes spin{to{transform:rotate(360deg)}} #s{width:40px;height:40px;background:navy;animation:spin .3s linear infinite}</style>
    <div id="s"></div><input id="q" autofocus value="typed">`,
    ),
  );
  await page.focus('#q');
  expect(await compare()).toMatchObject({ outcome: 'passed' });
  expect(await compare()).toMatchObject({ outcome: 'passed' });
  expect(visual.kept.map((k) => k.kind)).toEqual(['new']);
});

it('covers masked elements, so what they show never differs', async () => {
  const clock = (text: string) => banner('teal', `<p id="clock">${text}</p>`);
  await page.setContent(clock('10:00:01'));
  expect(await compare({ mask: ['#clock'] })).toMatchObject({ outcome: 'passed' });
  await page.setContent(clock('23:59:59'));
  expect(await compare({ mask: ['#clock'] })).toMatchObject({ outcome: 'passed' });
  expect(await compare({ name: 'unmasked' })).toMatchObject({ outcome: 'passed' });
  await page.setContent(clock('10:00:01'));
  expect(await compare({ name: 'unmasked' })).toMatchObject({ outcome: 'failed', code: 'screenshot_changed' });
});

it("compares one element's screenshot, and says when the element is not there", async () => {
  await page.setContent(banner('teal'));
  expect(await compare({ name: 'banner', selector: '#banner' })).toMatchObject({
    outcome: 'passed',
    target: '#banner',
  });
  await page.setContent(banner('teal', '<p>More below the banner</p>'));
  expect(await compare({ name: 'banner', selector: '#banner' })).toMatchObject({ outcome: 'passed' });
  expect(await compare({ name: 'gone', selector: '#nothing', timeoutMs: 500 })).toMatchObject({
    outcome: 'failed',
    code: 'element_not_found',
  });
});

it('fails a page that never holds still, naming it, and keeps nothing', async () => {
  await page.setContent(
    banner(
      'teal',
      `<p id="n">0</p><script>let n = 0; setInterval(() => { document.getElementById('n').textContent = String(++n); }, 30);</script>`,
    ),
  );
  const result = await compare({ timeoutMs: 1_000 });
  expect(result).toMatchObject({ outcome: 'failed', code: 'expectation_failed' });
  expect(result.message).toBe(
    'the page did not hold still for home.png: no two screenshots in a row were the same within 1 s',
  );
  expect(visual.kept).toEqual([]);
});

it('is an internal error where the worker keeps no baselines', async () => {
  await page.setContent(banner('teal'));
  const result = await executeStep(page, { action: 'expectScreenshot', name: 'home' }, { ...ctx(), visual: undefined });
  expect(result).toMatchObject({ outcome: 'error', code: 'internal_error' });
});
