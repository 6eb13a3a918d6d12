// Over 300 lines on purpose: every step test shares one warm browser and the fixture sites, and
// most of the length is the table of steps that do not pass; split files would each start their own.
import type { BrowserContext, Page } from 'playwright';
import { validateProjectFile, type Step } from '@testrun/contracts';
import { demoProjectFile, PROTECTED_CREDENTIALS, startFixtureSite, type FixtureSite } from '../fixtures/site';
import { freePort } from '../support/processes';
import { BrowserPool } from '../../apps/worker/src/browser/browser-pool';
import { captureScreenshot, executeStep, type StepContext } from '../../apps/worker/src/executors/steps/execute-step';
import { summarizeFailure } from '../../apps/worker/src/run/describe-step';
import type { StepOutcomeResult } from '../../apps/worker/src/run/step-outcome';

jest.setTimeout(90_000);

let site: FixtureSite;
let preview: FixtureSite;
let pool: BrowserPool;
let context: BrowserContext;
let page: Page;

beforeAll(async () => {
  pool = new BrowserPool();
  [site, preview] = await Promise.all([startFixtureSite(), startFixtureSite({ variant: 'preview' })]);
});

afterAll(async () => {
  await pool.close();
  await Promise.all([site.close(), preview.close()]);
});

beforeEach(async () => {
  context = await pool.newContext();
  page = await context.newPage();
});

afterEach(async () => {
  await context.close();
});

function ctx(overrides: Partial<StepContext> = {}): StepContext {
  return { baseUrl: site.url, deadline: Date.now() + 20_000, ...overrides };
}

/** Runs steps in order and fails the test at the first that does not pass, showing why. */
async function runAll(steps: Step[], context: StepContext = ctx()): Promise<StepOutcomeResult[]> {
  const results: StepOutcomeResult[] = [];
  for (const [i, step] of steps.entries()) {
    const result = await executeStep(page, step, context);
    if (result.outcome !== 'passed') throw new Error(summarizeFailure(i + 1, step, result));
    results.push(result);
  }
  return results;
}

describe('actions', () => {
  it('drives the order form with every interaction action', async () => {
    const form = await runAll([
      { action: 'goto', url: '/' },
      { action: 'expectTitle', title: 'Testrun Shop' },
      { action: 'expectTitle', pattern: '^testrun', flags: 'i' },
      { action: 'expectText', selector: 'h1', text: 'Testrun Shop' },
      { action: 'expectText', selector: 'h1', pattern: '^testrun shop$', flags: 'i' },
      { action: 'expectHidden', selector: '#result' },
      { action: 'fill', selector: '#name', value: 'Ada' },
      { action: 'select', selector: '#size', value: 'Large' },
      { action: 'select', selector: '#size', value: ['m'] },
      { action: 'check', selector: '#gift' },
      { action: 'uncheck', selector: '#newsletter' },
      { action: 'hover', selector: '#hover-target' },
      { action: 'expectVisible', selector: '#tooltip' },
      { action: 'click', selector: 'text=Place order' },
      { action: 'expectVisible', selector: '#result' },
      { action: 'expectText', selector: '#result', text: 'Ordered Medium for Ada as a gift' },
      { action: 'uncheck', selector: '#gift' },
      { action: 'fill', selector: '#name', value: 'Grace' },
      { action: 'press', selector: '#name', key: 'Enter' },
      { action: 'expectText', selector: '#result', text: 'Ordered Medium for Grace' },
      { action: 'wait', ms: 20 },
      { action: 'screenshot', name: 'after-order' },
    ]);
    expect(await page.locator('#newsletter').isChecked()).toBe(false);
    expect(await page.locator('#gift').isChecked()).toBe(false);
    expect(await page.locator('#size').inputValue()).toBe('m');
    const navigation = await runAll([
      { action: 'click', selector: '#about-link' },
      { action: 'expectUrl', url: '/about' },
      { action: 'expectUrl', pattern: '/about$' },
      { action: 'press', key: 'Tab' },
    ]);
    const results = [...form, ...navigation];
    expect(results).toHaveLength(26);
    expect(results[0]?.target).toBe(`${site.url}/`);
    expect(results[3]?.target).toBe('h1');
    expect(results[20]?.target).toBe('20 ms');
    const shot = results[21];
    expect(shot?.effect).toMatchObject({
      kind: 'screenshot',
      name: 'after-order',
      contentType: 'image/png',
      fullPage: false,
    });
    expect(shot?.effect?.body.subarray(1, 4).toString()).toBe('PNG');
    for (const result of results) {
      expect(result.startedAt).toBeInstanceOf(Date);
      expect(Number.isFinite(result.durationMs)).toBe(true);
    }
  });

  it('waits for an element that arrives late', async () => {
    await runAll([
      { action: 'goto', url: '/delayed-element' },
      { action: 'waitFor', selector: '#late' },
      { action: 'click', selector: 'text=Sign in' },
      { action: 'goto', url: '/delayed-element?ms=100' },
      { action: 'waitFor', selector: '#late', state: 'attached' },
    ]);
  });

  it('waits for a title that changes late', async () => {
    await runAll([
      { action: 'goto', url: '/title-change' },
      { action: 'expectTitle', title: 'Ready' },
      { action: 'screenshot', fullPage: true },
    ]);
  });

  it('resolves relative URLs against the run base URL, so an override is honoured', async () => {
    const [, heading] = await runAll(
      [
        { action: 'goto', url: '/' },
        { action: 'expectText', selector: 'h1', text: 'Testrun Shop (preview)' },
        { action: 'expectUrl', url: '/' },
      ],
      ctx({ baseUrl: preview.url }),
    );
    expect(heading?.outcome).toBe('passed');
    expect(preview.received.some((r) => r.path === '/')).toBe(true);
  });

  it('follows redirects and checks the final URL', async () => {
    await runAll([
      { action: 'goto', url: '/redirect' },
      { action: 'expectUrl', url: `${site.url}/about` },
      { action: 'expectText', selector: 'h1', text: 'About' },
    ]);
  });

  it('opens a basic-auth page when the context has the credentials', async () => {
    const authed = await pool.newContext({ httpCredentials: { ...PROTECTED_CREDENTIALS } });
    try {
      const authedPage = await authed.newPage();
      const result = await executeStep(authedPage, { action: 'goto', url: '/protected' }, ctx());
      expect(result.outcome).toBe('passed');
      expect(
        (await executeStep(authedPage, { action: 'expectText', selector: '#secret', text: 'Welcome' }, ctx())).outcome,
      ).toBe('passed');
    } finally {
      await authed.close();
    }
  });
});

/**
 * A step that does not pass and how it reads: `outcome/code: message`. In the expectation, the
 * target, the summary and a goto's URL, `{site}` stands for the fixture site's URL and `{closed}`
 * for an address nothing listens on. Every step but a goto runs on the page `open` (default `/`).
 */
type Problem = [step: Step, reads: string | RegExp, more?: ProblemDetails];
type ProblemDetails = {
  open?: string;
  /** The test's deadline from now (default 20 s) and its budget. */
  deadlineMs?: number;
  budgetMs?: number;
  target?: string;
  /** The run's summary were the step its first. */
  summary?: string;
};

const NOT_FOUND = 'failed/element_not_found: element "#nope" not found within 300 ms';
const BUDGET_RAN_OUT = "error/timeout: the test's time budget ran out during this step";
const EXPECTED = 'failed/expectation_failed: expected';
const INVALID = 'error/invalid_definition:';

const PROBLEMS: Problem[] = [
  [
    { action: 'expectText', selector: 'h1', text: 'Shoe store', timeoutMs: 500 },
    `${EXPECTED} text of "h1" to contain "Shoe store" but it was "Testrun Shop"`,
    {
      target: 'h1',
      summary:
        'Failed at step 1 (expectText "h1"): expected text of "h1" to contain "Shoe store" but it was "Testrun Shop"',
    },
  ],
  [
    { action: 'expectTitle', title: 'Shop', timeoutMs: 300 },
    `${EXPECTED} title to be "Shop" but it was "Testrun Shop"`,
  ],
  [{ action: 'expectUrl', url: '/about', timeoutMs: 300 }, `${EXPECTED} URL to be "{site}/about" but it was "{site}/"`],
  [
    { action: 'expectText', selector: 'h1', pattern: '^Shop', timeoutMs: 300 },
    `${EXPECTED} text of "h1" to match /^Shop/ but it was "Testrun Shop"`,
  ],
  [
    { action: 'expectHidden', selector: 'h1', timeoutMs: 300 },
    `${EXPECTED} "h1" to be hidden but it was still visible`,
  ],
  [
    { action: 'expectVisible', selector: '#tooltip', timeoutMs: 300 },
    `${EXPECTED} "#tooltip" to be visible but it was hidden`,
  ],
  [
    { action: 'click', selector: 'input[type=checkbox]' },
    `${EXPECTED} "input[type=checkbox]" to match one element but it matched 2`,
  ],
  [
    { action: 'check', selector: '#name' },
    'failed/expectation_failed: cannot check "#name": Not a checkbox or radio button',
  ],
  [
    { action: 'click', selector: 'text=Sign in', timeoutMs: 500 },
    'failed/element_not_found: element "text=Sign in" not found within 500 ms',
    {
      open: '/missing-element',
      target: 'text=Sign in',
      summary: 'Failed at step 1 (click "text=Sign in"): element not found within 500 ms',
    },
  ],
  [{ action: 'expectText', selector: '#nope', text: 'x', timeoutMs: 300 }, NOT_FOUND],
  [{ action: 'expectVisible', selector: '#nope', timeoutMs: 300 }, NOT_FOUND],
  [{ action: 'waitFor', selector: '#nope', timeoutMs: 300 }, NOT_FOUND],
  [{ action: 'fill', selector: '#nope', value: 'x', timeoutMs: 300 }, NOT_FOUND],
  [
    { action: 'click', selector: '#tooltip', timeoutMs: 500 },
    /^failed\/element_not_found: .* never became ready to click within 500 ms$/,
  ],
  [
    { action: 'select', selector: '#size', value: 'XXL', timeoutMs: 300 },
    /^failed\/element_not_found: .* select "XXL" in within 300 ms$/,
  ],
  [
    { action: 'goto', url: '/broken' },
    'failed/http_error: GET {site}/broken answered HTTP 500',
    { target: '{site}/broken', summary: 'Failed at step 1 (goto "/broken"): GET {site}/broken answered HTTP 500' },
  ],
  [{ action: 'goto', url: '/protected' }, 'failed/http_error: GET {site}/protected answered HTTP 401'],
  [
    { action: 'goto', url: '{closed}' },
    'error/target_unreachable: connection refused: {closed} (net::ERR_CONNECTION_REFUSED)',
    {
      target: '{closed}',
      summary: 'Error at step 1 (goto "{closed}"): target unreachable (connection refused: {closed})',
    },
  ],
  [{ action: 'goto', url: '/slow', timeoutMs: 300 }, 'error/target_unreachable: no answer within 300 ms: {site}/slow'],
  [
    { action: 'goto', url: 'http://127.0.0.1:9/' },
    /^error\/target_unreachable: port blocked by the browser as unsafe: /,
  ],
  [
    { action: 'goto', url: 'http://testrun-fixture.invalid/' },
    /^error\/target_unreachable: DNS lookup failed: http:\/\/testrun-fixture\.invalid\/ \(net::ERR_NAME_/,
  ],
  [
    { action: 'goto', url: '/slow' },
    "error/timeout: the test's time budget of 1 s ran out during this step",
    { deadlineMs: 700, budgetMs: 1_000, summary: 'Error at step 1 (goto "/slow"): time budget of 1 s exceeded' },
  ],
  [{ action: 'expectText', selector: 'h1', text: 'never' }, BUDGET_RAN_OUT, { deadlineMs: 300 }],
  [{ action: 'click', selector: '#nope' }, BUDGET_RAN_OUT, { deadlineMs: 300 }],
  [{ action: 'wait', ms: 20_000 }, BUDGET_RAN_OUT, { deadlineMs: 200 }],
  [{ action: 'click', selector: 'h1' }, BUDGET_RAN_OUT, { deadlineMs: -1 }],
  [{ action: 'click', selector: 'div[' }, /^error\/invalid_definition: selector "div\[" is not valid: /],
  [
    { action: 'expectText', selector: 'xpath=//[', text: 'x' },
    /^error\/invalid_definition: selector "xpath=\/\/\[" is not valid: /,
  ],
  [
    { action: 'click', selector: 'nosuchengine=x' },
    /^error\/invalid_definition: selector "nosuchengine=x" is not valid: .*Unknown engine/,
  ],
  [
    { action: 'expectText', selector: 'h1', pattern: '(unclosed' },
    /^error\/invalid_definition: pattern \/\(unclosed\/ is not a valid regular expression: /,
  ],
  [
    { action: 'expectUrl', pattern: '[' },
    /^error\/invalid_definition: pattern \/\[\/ is not a valid regular expression/,
  ],
  [{ action: 'goto', url: 'file:///etc/passwd' }, `${INVALID} URL "file:///etc/passwd" is not http(s)`],
  [{ action: 'press', key: 'NoSuchKey' }, /^error\/invalid_definition: key is not valid: Unknown key: "NoSuchKey"/],
  [{ action: 'expectTitle' }, `${INVALID} expectTitle needs exactly one of title or pattern`],
  [JSON.parse('{"action":"teleport"}') as Step, `${INVALID} unknown action "teleport"`],
];

describe('a step that does not pass says why', () => {
  let urls: Record<string, string>;
  beforeAll(async () => {
    urls = { '{site}': site.url, '{closed}': `http://127.0.0.1:${await freePort()}/` };
  });
  const at = (text: string) => text.replace(/\{site\}|\{closed\}/g, (name) => urls[name] ?? name);

  it.each(PROBLEMS)('%j', async (planned, reads, more = {}) => {
    const step = planned.action === 'goto' ? { ...planned, url: at(planned.url) } : planned;
    if (step.action !== 'goto') await runAll([{ action: 'goto', url: more.open ?? '/' }]);
    const deadline = Date.now() + (more.deadlineMs ?? 20_000);
    const result = await executeStep(page, step, ctx({ deadline, budgetMs: more.budgetMs }));
    const read = `${result.outcome}/${result.code ?? ''}: ${result.message ?? ''}`;
    if (typeof reads === 'string') expect(read).toBe(at(reads));
    else expect(read).toMatch(reads);
    if (more.target !== undefined) expect(result.target).toBe(at(more.target));
    if (more.summary !== undefined) expect(summarizeFailure(1, step, result)).toBe(at(more.summary));
  });
});

describe('error: the page or browser gives out', () => {
  it('browser_crashed: the page closes underneath a step', async () => {
    await runAll([{ action: 'goto', url: '/missing-element' }]);
    const pending = executeStep(page, { action: 'waitFor', selector: '#never' }, ctx());
    setTimeout(() => void page.close(), 200);
    const result = await pending;
    expect(result).toMatchObject({ outcome: 'error', code: 'browser_crashed' });
    const after = await executeStep(page, { action: 'goto', url: '/' }, ctx());
    expect(after).toMatchObject({ outcome: 'error', code: 'browser_crashed' });
  });

  it('browser_crashed: the renderer crashes during a step', async () => {
    await runAll([{ action: 'goto', url: '/missing-element' }]);
    const pending = executeStep(page, { action: 'expectText', selector: '#never', text: 'x' }, ctx());
    setTimeout(() => void page.goto('chrome://crash').catch(() => undefined), 200);
    const result = await pending;
    expect(result).toMatchObject({ outcome: 'error', code: 'browser_crashed' });
    expect(result.message).toContain('crash');
  });

  it('timeout: a page that stops responding is cut off by the step watchdog', async () => {
    await runAll([{ action: 'goto', url: '/' }]);
    await page.evaluate(() => {
      setTimeout(() => {
        for (;;) {
          // A busy loop: the renderer never answers again.
        }
      }, 50);
    });
    await new Promise((resolve) => setTimeout(resolve, 150));
    const result = await executeStep(page, { action: 'expectTitle', title: 'never', timeoutMs: 300 }, ctx());
    expect(result).toMatchObject({ outcome: 'error', code: 'timeout' });
    expect(result.message).toContain('stopped responding');
  });
});

describe('captureScreenshot', () => {
  it('returns a JPEG of the viewport, and null once the page is gone', async () => {
    await runAll([{ action: 'goto', url: '/' }]);
    const image = await captureScreenshot(page);
    expect(image?.subarray(0, 2)).toEqual(Buffer.from([0xff, 0xd8]));
    await page.close();
    expect(await captureScreenshot(page)).toBeNull();
  });
});

describe('fixture site', () => {
  it('serves a demo project file that validates', () => {
    const file = demoProjectFile(site.url);
    const validation = validateProjectFile(file);
    expect(validation).toMatchObject({ ok: true });
    expect(file.suites[0]?.tests.map((t) => t.key)).toEqual([
      'order-form',
      'heading-mismatch',
      'sign-in-missing',
      'broken-page',
      'disabled',
      'unreachable',
      'over-budget',
    ]);
  });

  it('demo project tests end the way their names say', async () => {
    const tests = demoProjectFile(site.url).suites[0]?.tests ?? [];
    const outcomes: Record<string, string> = {};
    for (const test of tests.filter((t) => t.enabled !== false)) {
      const runContext = await pool.newContext();
      try {
        const runPage = await runContext.newPage();
        const budgetMs = test.timeoutMs ?? 30_000;
        const runCtx = { baseUrl: site.url, deadline: Date.now() + budgetMs, budgetMs };
        outcomes[test.key] = 'passed';
        for (const step of test.steps) {
          const result = await executeStep(runPage, step, runCtx);
          if (result.outcome !== 'passed') {
            outcomes[test.key] = `${result.outcome}/${result.code}`;
            break;
          }
        }
      } finally {
        await runContext.close();
      }
    }
    expect(outcomes).toEqual({
      'order-form': 'passed',
      'heading-mismatch': 'failed/expectation_failed',
      'sign-in-missing': 'failed/element_not_found',
      'broken-page': 'failed/http_error',
      unreachable: 'error/target_unreachable',
      'over-budget': 'error/timeout',
    });
  });

  it('third-party page loads from the second origin, which records each request', async () => {
    await runAll([
      { action: 'goto', url: '/third-party' },
      { action: 'expectText', selector: '#status', text: 'All third-party requests done' },
    ]);
    const paths = site.thirdParty.received.map((r) => r.path);
    expect(paths).toEqual(expect.arrayContaining(['/pixel.gif', '/widget.js', '/api/data']));
  });
});
