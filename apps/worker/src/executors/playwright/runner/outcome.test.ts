import { classifyAttempt, failingStep, invalidDefinition, limitHit, setupFailed } from './outcome';
import type { PlaywrightAttempt, PlaywrightStep } from './types';

function attempt(overrides: Partial<PlaywrightAttempt>): PlaywrightAttempt {
  return {
    retry: 0,
    status: 'failed',
    expectedStatus: 'passed',
    durationMs: 10,
    annotations: [],
    errors: [],
    steps: [],
    attachments: [],
    stdout: '',
    stderr: '',
    ...overrides,
  };
}

function step(
  title: string,
  category: PlaywrightStep['category'],
  error?: string,
  steps: PlaywrightStep[] = [],
): PlaywrightStep {
  return { title, category, startMs: 0, durationMs: 1, steps, ...(error ? { error: { message: error } } : {}) };
}

const at = { file: 'e2e/shop.spec.ts', line: 12, column: 5 };

describe('classifyAttempt', () => {
  it.each([
    ['passed', attempt({ status: 'passed' }), 'passed', null],
    ['test.fail() and failed', attempt({ status: 'failed', expectedStatus: 'failed' }), 'passed', null],
    ['test.fail() and passed', attempt({ status: 'passed', expectedStatus: 'failed' }), 'failed', 'unexpected_pass'],
    [
      'the time budget',
      attempt({ status: 'timedOut', errors: [{ message: 'Test timeout of 1000ms exceeded.' }] }),
      'error',
      'timeout',
    ],
    [
      'an expect',
      attempt({ errors: [{ message: 'Error: expect(received).toBe(expected)' }] }),
      'failed',
      'expectation_failed',
    ],
    [
      'a locator action',
      attempt({ errors: [{ message: 'TimeoutError: locator.click: Timeout 1500ms exceeded.' }] }),
      'failed',
      'element_not_found',
    ],
    [
      'a locator action, its error worded without the call (as Playwright reports it while it traces)',
      attempt({
        errors: [
          { message: "TimeoutError: Timeout 500ms exceeded.\nCall log:\n  - waiting for locator('#missing')\n" },
        ],
      }),
      'failed',
      'element_not_found',
    ],
    [
      'a locator by role, its error worded without the call',
      attempt({
        errors: [
          {
            message:
              "TimeoutError: Timeout 500ms exceeded.\nCall log:\n  - waiting for getByRole('link', { name: 'Nowhere' })\n",
          },
        ],
      }),
      'failed',
      'element_not_found',
    ],
    [
      'a navigation, its error worded without the call',
      attempt({
        errors: [
          {
            message:
              'TimeoutError: Timeout 500ms exceeded.\nCall log:\n  - navigating to "http://shop.test/slow", waiting until "load"\n',
          },
        ],
      }),
      'error',
      'target_unreachable',
    ],
    [
      'a timeout of its own code',
      attempt({ errors: [{ message: 'TimeoutError: Timeout 500ms exceeded.' }] }),
      'error',
      'test_code_error',
    ],
    [
      'an expect on a locator that matched nothing',
      attempt({
        errors: [
          {
            message:
              "Error: expect(locator).toBeVisible() failed\n\nLocator: locator('#missing')\nExpected: visible\nTimeout: 500ms\nError: element(s) not found\n\nCall log:\n  - waiting for locator('#missing')\n",
          },
        ],
      }),
      'failed',
      'element_not_found',
    ],
    [
      'an expect on a locator that matched nothing, as Playwright before 1.50 words it',
      attempt({
        errors: [
          {
            message:
              "Error: Timed out 5000ms waiting for expect(locator).toBeVisible()\n\nLocator: locator('#missing')\nExpected: visible\nReceived: <element(s) not found>\nCall log:\n",
          },
        ],
      }),
      'failed',
      'element_not_found',
    ],
    [
      'an expect on an element that is there',
      attempt({
        errors: [
          {
            message:
              'Error: expect(locator).toHaveText(expected) failed\n\nLocator: locator(\'h1\')\nExpected: "Closed"\nReceived: "Shop"\nTimeout: 500ms\n',
          },
        ],
      }),
      'failed',
      'expectation_failed',
    ],
    [
      'an expect as Playwright before 1.50 words it',
      attempt({ errors: [{ message: 'Error: Timed out 5000ms waiting for expect(locator).toHaveText(expected)' }] }),
      'failed',
      'expectation_failed',
    ],
    [
      'a refused navigation',
      attempt({ errors: [{ message: 'Error: page.goto: net::ERR_CONNECTION_REFUSED at http://x/' }] }),
      'error',
      'target_unreachable',
    ],
    [
      'a refused API request',
      attempt({ errors: [{ message: 'Error: apiRequestContext.get: connect ECONNREFUSED 10.0.0.1:80' }] }),
      'error',
      'target_unreachable',
    ],
    [
      'a navigation timeout',
      attempt({ errors: [{ message: 'TimeoutError: page.goto: Timeout 3000ms exceeded.' }] }),
      'error',
      'target_unreachable',
    ],
    [
      'an API request the target did not answer in time',
      attempt({ errors: [{ message: 'Error: apiRequestContext.get: Timeout 1500ms exceeded.' }] }),
      'error',
      'target_unreachable',
    ],
    ['a crash', attempt({ errors: [{ message: 'Error: locator.click: Target crashed' }] }), 'error', 'browser_crashed'],
    ['its own code', attempt({ errors: [{ message: 'Error: boom' }] }), 'error', 'test_code_error'],
  ])('%s', (_name, given, status, code) => {
    expect(classifyAttempt(given)).toMatchObject({ status, code });
  });

  it('a soft expect that failed is found from the step tree even when the message does not say', () => {
    const given = attempt({
      errors: [{ message: 'Error: not equal' }],
      steps: [step('Expect "toBe"', 'expect', 'not equal')],
    });
    expect(classifyAttempt(given)).toMatchObject({ status: 'failed', code: 'expectation_failed' });
  });

  it('skips with the description of the skip or fixme annotation', () => {
    const given = attempt({ status: 'skipped', annotations: [{ type: 'skip', description: 'closed on Sundays' }] });
    expect(classifyAttempt(given)).toEqual({
      status: 'skipped',
      code: null,
      skipReason: 'skipped_in_code',
      summary: 'closed on Sundays',
    });
  });

  it('a test Playwright skipped itself (its serial group failed before it) says so', () => {
    expect(classifyAttempt(attempt({ status: 'skipped', annotations: [] }))).toEqual({
      status: 'skipped',
      code: null,
      skipReason: 'skipped_in_code',
      summary: 'Skipped by Playwright: an earlier test of its serial group did not pass',
    });
  });

  const refused = { host: 'blocked.test', port: 80, detail: 'blocked.test is denied (rule: deny_list)' };
  const note =
    'the network policy refused a request while it ran (the first: blocked.test:80, blocked.test is denied (rule: deny_list))';

  it('a test that passed is passed whatever was refused while it ran, the refusal named in its summary', () => {
    expect(classifyAttempt(attempt({ status: 'passed' }), [refused])).toEqual({
      status: 'passed',
      code: null,
      summary: `Passed; ${note}`,
    });
    expect(classifyAttempt(attempt({ status: 'failed', expectedStatus: 'failed' }), [refused, refused])).toEqual({
      status: 'passed',
      code: null,
      summary: `Failed as test.fail() expects; the network policy refused 2 requests while it ran (the first: blocked.test:80, ${refused.detail})`,
    });
  });

  it('a test that failed on its own error keeps it, whatever was refused before', () => {
    const own = attempt({ errors: [{ message: 'Error: boom in test code' }] });
    expect(classifyAttempt(own, [refused])).toEqual({
      status: 'error',
      code: 'test_code_error',
      summary: `Failed: Error: boom in test code; ${note}`,
    });
    // An expect on something else, a timeout and a crash stay what they are.
    const expectFailed = attempt({ errors: [{ message: 'Error: expect(received).toBe(expected)\n\nExpected: 2' }] });
    expect(classifyAttempt(expectFailed, [refused])).toMatchObject({ status: 'failed', code: 'expectation_failed' });
    const timedOut = attempt({ status: 'timedOut', errors: [{ message: 'Test timeout of 1000ms exceeded.' }] });
    expect(classifyAttempt(timedOut, [refused])).toMatchObject({ status: 'error', code: 'timeout' });
    // Even one whose page was left on the refused host: its own throw is not about the page.
    const onPage = attempt({
      errors: [{ message: 'Error: mine' }],
      annotations: [{ type: 'testrun:page-url', description: 'http://blocked.test/' }],
    });
    expect(classifyAttempt(onPage, [refused])).toMatchObject({ status: 'error', code: 'test_code_error' });
  });

  it.each([
    [
      'a navigation the proxy refused',
      'Error: page.goto: net::ERR_TUNNEL_CONNECTION_FAILED at https://blocked.test/\nCall log:',
    ],
    [
      "a request's call log",
      'Error: expect(response).toBeOK() failed\n\nCall log:\n→ GET http://blocked.test/x\n← 403 Forbidden',
    ],
    [
      "the proxy's refusal page",
      'Error: expect(received).toBe(expected)\nReceived: "This request was blocked by the target network policy."',
    ],
    ['its own error naming the refused URL', 'Error: could not seed http://BLOCKED.test:80/api'],
  ])('a test that failed on the refused request itself is error/target_blocked: %s', (_name, message) => {
    expect(classifyAttempt(attempt({ errors: [{ message }] }), [refused, refused])).toEqual({
      status: 'error',
      code: 'target_blocked',
      summary:
        'Blocked by the network policy: blocked.test:80 (blocked.test is denied (rule: deny_list)); and 1 more request',
    });
  });

  it("a test that failed on a page left on a refused host (the proxy's refusal page) is error/target_blocked", () => {
    const onPage = (url: string) =>
      attempt({
        errors: [{ message: "Error: expect(locator).toHaveText(expected) failed\n\nLocator: locator('h1')" }],
        annotations: [{ type: 'testrun:page-url', description: url }],
      });
    expect(classifyAttempt(onPage('http://blocked.test/landing'), [refused])).toMatchObject({
      status: 'error',
      code: 'target_blocked',
    });
    expect(classifyAttempt(onPage('http://shop.test/'), [refused])).toMatchObject({
      status: 'failed',
      code: 'expectation_failed',
    });
  });

  it('names a host only whole, never as a part of a longer name or address', () => {
    const failedWith = (message: string) => classifyAttempt(attempt({ errors: [{ message }] }), [refused]).code;
    expect(failedWith('Error: GET http://notblocked.test/ failed')).toBe('test_code_error');
    expect(failedWith('Error: GET http://a.blocked.test/ failed')).toBe('test_code_error');
    expect(failedWith('Error: GET http://blocked.test.example/ failed')).toBe('test_code_error');
    expect(failedWith('Error: GET http://blocked.test./ failed')).toBe('target_blocked');
    const address = { host: '127.0.0.2', port: 8080, detail: '127.0.0.2 is a loopback address (rule: loopback)' };
    const on = (message: string) => classifyAttempt(attempt({ errors: [{ message }] }), [address]).code;
    expect(on('Error: connect to 127.0.0.25 failed')).toBe('test_code_error');
    expect(on('Error: page.goto: net::ERR_TUNNEL_CONNECTION_FAILED at https://127.0.0.2:8080/')).toBe('target_blocked');
  });

  it('names the failing step by number and title, with the file and line', () => {
    const given = attempt({
      errors: [{ message: 'Error: expect(locator).toHaveText(expected) failed\n\nLocator: h1', location: at }],
      steps: [
        step('Before Hooks', 'hook'),
        step('open', 'test.step'),
        step('Click', 'pw:api'),
        step('check', 'test.step', 'x', [step('Expect "toHaveText"', 'expect', 'x')]),
      ],
    });
    expect(classifyAttempt(given).summary).toBe(
      'Failed at step 5 (Expect "toHaveText"): Error: expect(locator).toHaveText(expected) failed (e2e/shop.spec.ts:12)',
    );
  });

  it("numbers the failing step as the step table's row: the whole tree depth first, hooks and fixtures included", () => {
    const found = failingStep([step('Before Hooks', 'hook', 'boom', [step('beforeEach hook', 'hook', 'boom')])]);
    expect(found?.step.title).toBe('beforeEach hook');
    expect(found?.number).toBe(2);
    const nested = failingStep([
      step('Before Hooks', 'hook', undefined, [
        step('Fixture "page"', 'fixture', undefined, [step('Create page', 'pw:api')]),
      ]),
      step('Expect "toHaveText"', 'expect'),
      step('buy it', 'test.step', 'x', [step('Click', 'pw:api'), step('Expect "toHaveText"', 'expect', 'x')]),
      step('After Hooks', 'hook'),
    ]);
    expect(nested?.number).toBe(7);
    expect(nested?.step.title).toBe('Expect "toHaveText"');
    expect(nested?.step.error).toBeDefined();
  });
});

describe('outcomes of tests that did not end', () => {
  it('names the setup test and its failure, the limit, the load error', () => {
    expect(setupFailed('[setup] › log in', 'Failed: nope')).toEqual({
      status: 'error',
      code: 'setup_failed',
      summary: 'Setup test "[setup] › log in" failed: Failed: nope',
    });
    expect(limitHit('memory')).toMatchObject({ status: 'error', code: 'resource_limit' });
    expect(invalidDefinition("Error: Cannot find module './x'\n at y")).toEqual({
      status: 'error',
      code: 'invalid_definition',
      summary: "The tests did not load: Error: Cannot find module './x'",
    });
  });

  it("names a module's SyntaxError, not only the place Node prints above it", () => {
    const node = [
      'file:///work/bundle/playwright.config.ts:1',
      "import { defineConfig, devices } from '@playwright/test';",
      '         ^^^^^^^^^^^^',
      "SyntaxError: The requested module '@playwright/test' does not provide an export named 'defineConfig'",
      '    at ModuleJob._instantiate (node:internal/modules/esm/module_job:213:21)',
    ].join('\n');
    expect(invalidDefinition(node).summary).toBe(
      "The tests did not load: SyntaxError: The requested module '@playwright/test' does not provide an export named 'defineConfig' (playwright.config.ts:1)",
    );
    // A place with nothing after it that names an error stays as it was.
    expect(invalidDefinition('file:///work/bundle/a.ts:3\nconst x = ;').summary).toBe(
      'The tests did not load: file:///work/bundle/a.ts:3',
    );
  });
});
