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

  it('a refusal of the network policy wins over what the test made of it', () => {
    const given = attempt({ errors: [{ message: 'Error: expect(locator).toHaveText(expected) failed' }] });
    expect(classifyAttempt(given, 'blocked.test is denied (rule: deny_list)')).toEqual({
      status: 'error',
      code: 'target_blocked',
      summary: 'Blocked by the network policy: blocked.test is denied (rule: deny_list)',
    });
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
      'Failed at step 3 (Expect "toHaveText"): Error: expect(locator).toHaveText(expected) failed (e2e/shop.spec.ts:12)',
    );
  });

  it('a failing hook is named as a hook', () => {
    const found = failingStep([step('Before Hooks', 'hook', 'boom', [step('beforeEach hook', 'hook', 'boom')])]);
    expect(found?.step.title).toBe('beforeEach hook');
    expect(found?.number).toBe(0);
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
});
