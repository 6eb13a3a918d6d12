import type { BrowserContext, Page } from 'playwright';
import type { Step } from '@testrun/contracts';
import { startFixtureSite, type FixtureSite } from '../fixtures/site';
import { BrowserPool } from '../../apps/worker/src/browser/browser-pool';
import { executeStep } from '../../apps/worker/src/executors/steps/execute-step';

/**
 * A cancel ends the step under way through the run's signal, which every Playwright call of the
 * step is given: the step ends `error`/`cancelled` with nothing of its still under way, so that its
 * context can then be closed safely. Each step here would otherwise run far past the jest timeout.
 */
jest.setTimeout(20_000);

let site: FixtureSite;
let pool: BrowserPool;
let context: BrowserContext;
let page: Page;

beforeAll(async () => {
  pool = new BrowserPool();
  site = await startFixtureSite();
});

afterAll(async () => {
  await pool.close();
  await site.close();
});

beforeEach(async () => {
  context = await pool.newContext();
  page = await context.newPage();
});

afterEach(async () => {
  await context.close();
});

/** Runs `step`, cancelling it once the page has asked the site for `cancelOn` (or at once). */
async function cancelled(step: Step, cancelOn?: string) {
  const controller = new AbortController();
  const at = site.received.length;
  const ctx = { baseUrl: site.url, deadline: Date.now() + 120_000, signal: controller.signal };
  const running = executeStep(page, step, ctx);
  if (cancelOn === undefined) controller.abort();
  else
    while (!site.received.slice(at).some((r) => r.path.startsWith(cancelOn)))
      await new Promise((resolve) => setTimeout(resolve, 20));
  controller.abort();
  return running;
}

it.each<[string, Step, string | undefined]>([
  [
    'a navigation to a page that does not answer',
    { action: 'goto', url: '/slow?ms=100000', timeoutMs: 60_000 },
    '/slow',
  ],
  ['a wait', { action: 'wait', ms: 30_000 }, undefined],
  [
    'an expectation polling for text that never comes',
    { action: 'expectText', selector: '#nothing', text: 'never', timeoutMs: 60_000 },
    undefined,
  ],
])('%s ends cancelled', async (_, step, cancelOn) => {
  if (step.action === 'expectText') await page.goto(site.url);
  const result = await cancelled(step, cancelOn);
  expect(result).toMatchObject({ outcome: 'error', code: 'cancelled' });
});

it('a step of a run already cancelled is not started', async () => {
  const result = await cancelled({ action: 'goto', url: '/' });
  expect(result).toMatchObject({ outcome: 'error', code: 'cancelled' });
  expect(page.url()).toBe('about:blank');
});

it('a wait its page closes under ends with its timer cleared', async () => {
  const setTimer = jest.spyOn(global, 'setTimeout');
  const clearTimer = jest.spyOn(global, 'clearTimeout');
  try {
    const running = executeStep(
      page,
      { action: 'wait', ms: 30_000 },
      { baseUrl: site.url, deadline: Date.now() + 120_000 },
    );
    await new Promise((resolve) => setTimeout(resolve, 200));
    await page.close();
    expect(await running).toMatchObject({ outcome: 'error', code: 'browser_crashed' });
    // The wait's own timer (the time left of its 30 s), not the watchdog's (30 s and a grace).
    const waits = setTimer.mock.calls.flatMap(([, ms], i) =>
      typeof ms === 'number' && ms > 25_000 && ms <= 30_000 ? [setTimer.mock.results[i]?.value as unknown] : [],
    );
    expect(waits).toHaveLength(1);
    const cleared = clearTimer.mock.calls.some(([timer]) => timer === waits[0]);
    expect(cleared).toBe(true);
  } finally {
    setTimer.mockRestore();
    clearTimer.mockRestore();
  }
});
