import { createServer } from 'node:net';
import type { BrowserContext, Page } from 'playwright';
import { validateProjectFile, type Step } from '@testrun/contracts';
import {
  demoProjectFile,
  PROTECTED_CREDENTIALS,
  startFixtureSite,
  type FixtureSite,
} from '../../../../test/fixtures/site';
import { BrowserPool } from '../browser/browser-pool';
import {
  captureScreenshot,
  executeStep,
  summarizeFailure,
  type StepContext,
  type StepOutcomeResult,
} from './execute-step';

jest.setTimeout(30_000);

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
  await pool?.close();
  await Promise.all([site?.close(), preview?.close()]);
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

/** A port nothing listens on, so a connection is refused (port 9 is on Chromium's unsafe list). */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return port;
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
      expect(result.durationMs).toBeGreaterThanOrEqual(0);
    }
  });

  it('waits for elements and titles that arrive late', async () => {
    await runAll([
      { action: 'goto', url: '/delayed-element' },
      { action: 'waitFor', selector: '#late' },
      { action: 'click', selector: 'text=Sign in' },
      { action: 'goto', url: '/title-change' },
      { action: 'expectTitle', title: 'Ready' },
      { action: 'goto', url: '/delayed-element?ms=100' },
      { action: 'waitFor', selector: '#late', state: 'attached' },
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

describe('failed: the product misbehaved', () => {
  it('expectation_failed: text that does not match says expected and actual', async () => {
    await runAll([{ action: 'goto', url: '/' }]);
    const step: Step = { action: 'expectText', selector: 'h1', text: 'Shoe store', timeoutMs: 500 };
    const result = await executeStep(page, step, ctx());
    expect(result).toMatchObject({
      outcome: 'failed',
      code: 'expectation_failed',
      message: 'expected text of "h1" to contain "Shoe store" but it was "Testrun Shop"',
      target: 'h1',
    });
    expect(summarizeFailure(2, step, result)).toBe(
      'Failed at step 2 (expectText "h1"): expected text of "h1" to contain "Shoe store" but it was "Testrun Shop"',
    );
  });

  it('expectation_failed: title, URL, pattern, visibility and ambiguous selectors', async () => {
    await runAll([{ action: 'goto', url: '/' }]);
    const cases: Array<[Step, string]> = [
      [
        { action: 'expectTitle', title: 'Shop', timeoutMs: 300 },
        'expected title to be "Shop" but it was "Testrun Shop"',
      ],
      [
        { action: 'expectUrl', url: '/about', timeoutMs: 300 },
        `expected URL to be "${site.url}/about" but it was "${site.url}/"`,
      ],
      [
        { action: 'expectText', selector: 'h1', pattern: '^Shop', timeoutMs: 300 },
        'expected text of "h1" to match /^Shop/ but it was "Testrun Shop"',
      ],
      [
        { action: 'expectHidden', selector: 'h1', timeoutMs: 300 },
        'expected "h1" to be hidden but it was still visible',
      ],
      [
        { action: 'expectVisible', selector: '#tooltip', timeoutMs: 300 },
        'expected "#tooltip" to be visible but it was hidden',
      ],
      [
        { action: 'click', selector: 'input[type=checkbox]', timeoutMs: 300 },
        'expected "input[type=checkbox]" to match one element but it matched 2',
      ],
      [{ action: 'check', selector: '#name', timeoutMs: 300 }, 'cannot check "#name": Not a checkbox or radio button'],
    ];
    for (const [step, message] of cases) {
      const result = await executeStep(page, step, ctx());
      expect({ step, outcome: result.outcome, code: result.code, message: result.message }).toEqual({
        step,
        outcome: 'failed',
        code: 'expectation_failed',
        message,
      });
    }
  });

  it('element_not_found: an element that never appears within the step timeout', async () => {
    await runAll([{ action: 'goto', url: '/missing-element' }]);
    const step: Step = { action: 'click', selector: 'text=Sign in', timeoutMs: 500 };
    const result = await executeStep(page, step, ctx());
    expect(result).toMatchObject({
      outcome: 'failed',
      code: 'element_not_found',
      message: 'element "text=Sign in" not found within 500 ms',
      target: 'text=Sign in',
    });
    expect(summarizeFailure(3, step, result)).toBe(
      'Failed at step 3 (click "text=Sign in"): element not found within 500 ms',
    );
    for (const other of [
      { action: 'expectText', selector: '#nope', text: 'x', timeoutMs: 300 },
      { action: 'expectVisible', selector: '#nope', timeoutMs: 300 },
      { action: 'waitFor', selector: '#nope', timeoutMs: 300 },
      { action: 'fill', selector: '#nope', value: 'x', timeoutMs: 300 },
    ] satisfies Step[]) {
      expect(await executeStep(page, other, ctx())).toMatchObject({ outcome: 'failed', code: 'element_not_found' });
    }
  });

  it('element_not_found: an element that exists but never becomes usable says so', async () => {
    await runAll([{ action: 'goto', url: '/' }]);
    const result = await executeStep(page, { action: 'click', selector: '#tooltip', timeoutMs: 500 }, ctx());
    expect(result).toMatchObject({
      outcome: 'failed',
      code: 'element_not_found',
      message: 'element "#tooltip" was found but never became ready to click within 500 ms',
    });
    const option = await executeStep(
      page,
      { action: 'select', selector: '#size', value: 'XXL', timeoutMs: 300 },
      ctx(),
    );
    expect(option).toMatchObject({ outcome: 'failed', code: 'element_not_found' });
    expect(option.message).toContain('select "XXL" in');
  });

  it('http_error: a navigation answered 500', async () => {
    const step: Step = { action: 'goto', url: '/broken' };
    const result = await executeStep(page, step, ctx());
    expect(result).toMatchObject({
      outcome: 'failed',
      code: 'http_error',
      message: `GET ${site.url}/broken answered HTTP 500`,
      target: `${site.url}/broken`,
    });
    expect(summarizeFailure(1, step, result)).toBe(
      `Failed at step 1 (goto "/broken"): GET ${site.url}/broken answered HTTP 500`,
    );
  });

  it('http_error: basic auth refused without credentials (401)', async () => {
    const result = await executeStep(page, { action: 'goto', url: '/protected' }, ctx());
    expect(result).toMatchObject({
      outcome: 'failed',
      code: 'http_error',
      message: `GET ${site.url}/protected answered HTTP 401`,
    });
  });
});

describe('error: the run could not complete', () => {
  it('target_unreachable: connection refused', async () => {
    const url = `http://127.0.0.1:${await closedPort()}/`;
    const step: Step = { action: 'goto', url };
    const result = await executeStep(page, step, ctx());
    expect(result).toMatchObject({
      outcome: 'error',
      code: 'target_unreachable',
      message: `connection refused: ${url} (net::ERR_CONNECTION_REFUSED)`,
      target: url,
    });
    expect(summarizeFailure(1, step, result)).toBe(
      `Error at step 1 (goto "${url}"): target unreachable (connection refused: ${url})`,
    );
  });

  it('target_unreachable: a server that never answers within the step timeout', async () => {
    const result = await executeStep(page, { action: 'goto', url: '/slow', timeoutMs: 300 }, ctx());
    expect(result).toMatchObject({
      outcome: 'error',
      code: 'target_unreachable',
      message: `no answer within 300 ms: ${site.url}/slow`,
    });
  });

  it('target_unreachable: 127.0.0.1:9, which Chromium refuses to dial', async () => {
    const result = await executeStep(page, { action: 'goto', url: 'http://127.0.0.1:9/' }, ctx());
    expect(result).toMatchObject({
      outcome: 'error',
      code: 'target_unreachable',
      message: 'port blocked by the browser as unsafe: http://127.0.0.1:9/ (net::ERR_UNSAFE_PORT)',
    });
  });

  it('target_unreachable: DNS failure', async () => {
    const result = await executeStep(page, { action: 'goto', url: 'http://testrun-fixture.invalid/' }, ctx());
    expect(result).toMatchObject({ outcome: 'error', code: 'target_unreachable' });
    expect(result.message).toMatch(/^DNS lookup failed: http:\/\/testrun-fixture\.invalid\/ \(net::ERR_NAME_/);
  });

  it('timeout: the test deadline passes during a navigation, and the step stops there', async () => {
    const step: Step = { action: 'goto', url: '/slow' };
    const result = await executeStep(page, step, ctx({ deadline: Date.now() + 700, budgetMs: 1_000 }));
    expect(result).toMatchObject({
      outcome: 'error',
      code: 'timeout',
      message: "the test's time budget of 1 s ran out during this step",
    });
    expect(result.durationMs).toBeLessThan(5_000);
    expect(summarizeFailure(1, step, result)).toBe('Error at step 1 (goto "/slow"): time budget of 1 s exceeded');
  });

  it('timeout: the deadline also ends expectations, waits, and steps that start too late', async () => {
    await runAll([{ action: 'goto', url: '/' }]);
    const expectation = await executeStep(
      page,
      { action: 'expectText', selector: 'h1', text: 'never' },
      ctx({ deadline: Date.now() + 300 }),
    );
    expect(expectation).toMatchObject({
      outcome: 'error',
      code: 'timeout',
      message: "the test's time budget ran out during this step",
    });
    const missing = await executeStep(
      page,
      { action: 'click', selector: '#nope' },
      ctx({ deadline: Date.now() + 300 }),
    );
    expect(missing).toMatchObject({ outcome: 'error', code: 'timeout' });
    const wait = await executeStep(page, { action: 'wait', ms: 20_000 }, ctx({ deadline: Date.now() + 200 }));
    expect(wait).toMatchObject({ outcome: 'error', code: 'timeout' });
    const late = await executeStep(page, { action: 'click', selector: 'h1' }, ctx({ deadline: Date.now() - 1 }));
    expect(late).toMatchObject({ outcome: 'error', code: 'timeout' });
  });

  it('invalid_definition: selectors Playwright cannot parse, bad regexes, non-http URLs, unknown keys', async () => {
    await runAll([{ action: 'goto', url: '/' }]);
    const cases: Array<[Step, RegExp]> = [
      [{ action: 'click', selector: 'div[' }, /^selector "div\[" is not valid: /],
      [{ action: 'expectText', selector: 'xpath=//[', text: 'x' }, /^selector "xpath=\/\/\[" is not valid: /],
      [{ action: 'click', selector: 'nosuchengine=x' }, /^selector "nosuchengine=x" is not valid: .*Unknown engine/],
      [
        { action: 'expectText', selector: 'h1', pattern: '(unclosed' },
        /^pattern \/\(unclosed\/ is not a valid regular expression: /,
      ],
      [{ action: 'expectUrl', pattern: '[' }, /is not a valid regular expression/],
      [{ action: 'goto', url: 'file:///etc/passwd' }, /^URL "file:\/\/\/etc\/passwd" is not http\(s\)$/],
      [{ action: 'press', key: 'NoSuchKey' }, /^key is not valid: Unknown key: "NoSuchKey"/],
      [{ action: 'expectTitle' } as Step, /exactly one of title or pattern/],
    ];
    for (const [step, message] of cases) {
      const result = await executeStep(page, step, ctx());
      expect({ step, outcome: result.outcome, code: result.code }).toEqual({
        step,
        outcome: 'error',
        code: 'invalid_definition',
      });
      expect(result.message).toMatch(message);
    }
    const unknown = await executeStep(page, { action: 'teleport' } as unknown as Step, ctx());
    expect(unknown).toMatchObject({
      outcome: 'error',
      code: 'invalid_definition',
      message: 'unknown action "teleport"',
    });
  });

  it('browser_crashed: the page closes underneath a step', async () => {
    await runAll([{ action: 'goto', url: '/missing-element' }]);
    const pending = executeStep(page, { action: 'waitFor', selector: '#never' }, ctx());
    setTimeout(() => void page.close(), 200);
    const result = await pending;
    expect(result).toMatchObject({ outcome: 'error', code: 'browser_crashed' });
    expect(result.durationMs).toBeLessThan(4_000);
    const after = await executeStep(page, { action: 'goto', url: '/' }, ctx());
    expect(after).toMatchObject({ outcome: 'error', code: 'browser_crashed' });
  });

  it('browser_crashed: the renderer crashes during a step', async () => {
    await runAll([{ action: 'goto', url: '/missing-element' }]);
    const pending = executeStep(page, { action: 'expectText', selector: '#never', text: 'x' }, ctx());
    setTimeout(() => void page.goto('chrome://crash').catch(() => undefined), 200);
    expect(await pending).toMatchObject({
      outcome: 'error',
      code: 'browser_crashed',
      message: expect.stringContaining('crash'),
    });
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
