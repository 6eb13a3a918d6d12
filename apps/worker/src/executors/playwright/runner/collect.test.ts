import type { BlockedRequest } from '../../../network/egress-proxy';
import { relativeSteps, ResultCollector } from './collect';
import { playwrightTestKey } from './discover';
import { refusals } from '../ready-attempt';
import { INSIDE } from './sandboxed-cli';
import type { PlaywrightStep, PlaywrightTestResult, SetupTestResult } from './types';

const step = (title: string, extra: Partial<PlaywrightStep> = {}): PlaywrightStep => ({
  title,
  category: 'pw:api',
  startMs: 0,
  durationMs: 1,
  steps: [],
  ...extra,
});

describe('relativeSteps', () => {
  it("locates each step in the team's own files, relative to the bundle, or not at all", () => {
    const steps = relativeSteps(
      [
        step('Click', { location: { file: `${INSIDE.bundle}/e2e/po.ts`, line: 9, column: 7 } }),
        step('Create page', {
          location: { file: '/node_modules/playwright-core/lib/coreBundle.js', line: 9551, column: 3 },
        }),
        step('Helper', { location: { file: `${INSIDE.bundle}/node_modules/helper/index.js`, line: 1, column: 1 } }),
        step('Open', { location: { file: '/opt/testrun/playwright/fixtures.js', line: 3, column: 1 } }),
      ],
      INSIDE,
    );
    expect(steps.map((s) => s.location)).toEqual([
      { file: 'e2e/po.ts', line: 9, column: 7 },
      undefined,
      undefined,
      undefined,
    ]);
  });

  it("points a failing step and its error at the innermost frame of the stack in the team's files", () => {
    const stack = [
      'Error: expect(locator).toHaveText(expected) failed',
      '    at Object.toHaveText (/node_modules/playwright/lib/matchers/matchers.js:300:12)',
      `    at Shop.buy (${INSIDE.bundle}/e2e/po.ts:10:45)`,
      `    at ${INSIDE.bundle}/e2e/shop.spec.ts:12:3`,
    ].join('\n');
    const error = {
      message: 'Error: failed',
      stack,
      location: { file: '/node_modules/playwright/lib/x.js', line: 1, column: 1 },
    };
    const [failed] = relativeSteps([step('Expect', { category: 'expect', error })], INSIDE);
    expect(failed?.location).toEqual({ file: 'e2e/po.ts', line: 10, column: 45 });
    expect(failed?.error?.location).toEqual({ file: 'e2e/po.ts', line: 10, column: 45 });
  });
  it("takes the stack's file when the error's own names the bundle twice over, as Playwright 1.39 does", () => {
    const error = {
      message: 'Error: Timed out 500ms waiting for expect(locator).toHaveTitle(expected)',
      stack: `Error: Timed out\n    at ${INSIDE.bundle}/tests/version.spec.ts:12:22`,
      location: { file: `${INSIDE.bundle}/bundle/tests/version.spec.ts`, line: 12, column: 22 },
    };
    const [failed] = relativeSteps([step('Expect', { category: 'expect', error })], INSIDE);
    expect(failed?.error?.location).toEqual({ file: 'tests/version.spec.ts', line: 12, column: 22 });
  });
});

describe("a test's refusals", () => {
  const ref = (title: string) => ({ file: 'a.spec.ts', project: 'chromium', titlePath: [title] });
  const attempt = (title: string, endedAt: number) =>
    JSON.stringify({
      type: 'attempt',
      ...ref(title),
      line: 1,
      column: 1,
      final: true,
      endedAt,
      retry: 0,
      status: 'passed',
      expectedStatus: 'passed',
      durationMs: 5,
      annotations: [],
      errors: [],
      steps: [],
      attachments: [],
      stdout: '',
      stderr: '',
    });
  const refused = (host: string, askedAt: number): BlockedRequest => ({
    runId: 'r',
    host,
    port: 443,
    rule: 'scheme',
    detail: `${host} is not allowed`,
    askedAt,
  });

  it("are those asked for by its end; one the next test asked for before its end was read is the next one's", () => {
    const listener = { blocked: [] as BlockedRequest[] };
    const results: PlaywrightTestResult[] = [];
    const collector = new ResultCollector(
      [ref('first'), ref('second')],
      '/nonexistent-scratch',
      (result) => results.push(result),
      refusals(listener),
    );
    listener.blocked.push(refused('first.example', 1_000));
    // The second test began and was refused before the worker read the first one's end.
    listener.blocked.push(refused('second.example', 2_500));
    collector.line(attempt('first', 2_000));
    collector.line(attempt('second', 3_000));
    expect(results.map((r) => r.blocked.map((b) => b.host))).toEqual([['first.example'], ['second.example']]);
    expect(results[0]?.summary).toContain('first.example');
    expect(results[0]?.summary).not.toContain('second.example');
  });
});

describe('setup tests', () => {
  const setupLine = (title: string, status: 'passed' | 'failed', line: number) =>
    JSON.stringify({
      type: 'attempt',
      file: 'auth.setup.ts',
      line,
      column: 1,
      project: 'setup',
      titlePath: [title],
      final: true,
      endedAt: 5_000,
      retry: 0,
      status,
      expectedStatus: 'passed',
      durationMs: 40,
      annotations: [],
      errors: status === 'failed' ? [{ message: 'Error: seed refused' }] : [],
      steps: [step('seed', status === 'failed' ? { error: { message: 'Error: seed refused' } } : {})],
      attachments: [],
      stdout: '',
      stderr: '',
    });

  it('are told with their outcome, steps and location; the selected tests alone are results', () => {
    const results: PlaywrightTestResult[] = [];
    const setups: SetupTestResult[] = [];
    const selected = { file: 'a.spec.ts', project: 'chromium', titlePath: ['buys'] };
    const collector = new ResultCollector(
      [selected],
      '/nonexistent-scratch',
      (result) => results.push(result),
      () => [],
      undefined,
      INSIDE,
      (setup) => setups.push(setup),
    );
    collector.line(setupLine('signs in', 'passed', 3));
    collector.line(setupLine('seeds the shop', 'failed', 9));
    expect(results).toEqual([]);
    expect(setups.map((s) => [s.name, s.status, s.ref.line, s.endedAt, s.steps.map((st) => st.title)])).toEqual([
      ['[setup] › signs in', 'passed', 3, 5_000, ['seed']],
      ['[setup] › seeds the shop', 'error', 9, 5_000, ['seed']],
    ]);
    // The dependant that never ran ends on the failed setup, as before.
    const [rest] = collector.finishRest({ limit: null, aborted: false, stderr: '' });
    expect(rest).toMatchObject({ status: 'error', code: 'setup_failed' });
    expect(rest?.summary).toContain('"[setup] › seeds the shop"');
  });
});

describe("the reporter's lines", () => {
  const ref = (title: string) => ({ file: 'a.spec.ts', project: 'chromium', titlePath: [title] });
  const line = (type: string, title: string, extra: Record<string, unknown> = {}) =>
    JSON.stringify({ type, ...ref(title), line: 1, column: 1, ...extra });
  const passed = {
    final: true,
    endedAt: 1_000,
    retry: 0,
    status: 'passed',
    expectedStatus: 'passed',
    durationMs: 5,
    annotations: [],
    errors: [],
    steps: [],
    attachments: [],
    stdout: '',
    stderr: '',
  };
  const collect = () => {
    const results: PlaywrightTestResult[] = [];
    const collector = new ResultCollector(
      [ref('first'), ref('second')],
      '/nonexistent-scratch',
      (r) => results.push(r),
      () => [],
    );
    return { collector, results };
  };

  it('are refused when not of their shape, and the next ones still read', () => {
    const { collector, results } = collect();
    collector.line(line('attempt', 'first', { ...passed, errors: 'Error: no', steps: null }));
    collector.line(line('attempt', 'first', { ...passed, status: 'exploded' }));
    collector.line('{"type":"attempt"');
    expect(results).toEqual([]);
    collector.line(line('attempt', 'first', passed));
    expect(results.map((r) => [r.key, r.status])).toEqual([[playwrightTestKey(ref('first')), 'passed']]);
  });

  it("name the test of a line over the cap by its head, whatever the order of the head's members", () => {
    const { collector, results } = collect();
    collector.line(line('begin', 'first'));
    collector.line(line('begin', 'second'));
    // The head names the first test, its members in another order than the reporter's: the first
    // ends on the output limit, not the last that began.
    const head = JSON.stringify({ titlePath: ['first'], project: 'chromium', file: 'a.spec.ts', type: 'attempt' });
    collector.line(JSON.stringify({ type: 'oversized', bytes: 5_000_000, head: head.slice(0, -1) + ',"stdout":"xx' }));
    expect(results.map((r) => [r.key, r.code])).toEqual([[playwrightTestKey(ref('first')), 'resource_limit']]);
  });

  it("of a runner killed before any test's begin reached its reporter: the tests' code killed it, not a bundle that did not load", () => {
    const { collector } = collect();
    collector.line(JSON.stringify({ type: 'start' }));
    const rest = collector.finishRest({ limit: null, aborted: false, stderr: '' });
    expect(rest.map((r) => [r.code, r.summary])).toEqual([
      ['test_code_error', expect.stringContaining('before it reported which test ran') as unknown],
      ['test_code_error', expect.stringContaining('before it reported which test ran') as unknown],
    ]);
  });

  it('of a try Playwright did not retry though retries were left (a missing snapshot): that try, once the runner ended', () => {
    const missing = {
      ...passed,
      final: false,
      status: 'failed',
      errors: [{ message: "Error: A snapshot doesn't exist at /work/bundle/h.png, writing actual." }],
    };
    for (const [setting, status] of [
      ['pass', 'passed'],
      ['fail', 'failed'],
    ] as const) {
      const results: PlaywrightTestResult[] = [];
      const collector = new ResultCollector(
        [ref('first')],
        '/scratch',
        (r) => results.push(r),
        () => [],
        undefined,
        INSIDE,
        undefined,
        setting,
      );
      collector.line(line('attempt', 'first', missing));
      expect(results).toEqual([]);
      collector.line(JSON.stringify({ type: 'end' }));
      const rest = collector.finishRest({ limit: null, aborted: false, stderr: '' });
      expect(rest.map((r) => r.status)).toEqual([status]);
      expect(rest[0]?.code).not.toBe('invalid_definition');
    }
  });

  it('of a runner that never began (no start line): the tests did not load', () => {
    const { collector } = collect();
    const rest = collector.finishRest({ limit: null, aborted: false, stderr: 'SyntaxError: Unexpected token' });
    expect(rest.map((r) => r.code)).toEqual(['invalid_definition', 'invalid_definition']);
    // A runner that began and ended without running a test it was given: not found, still invalid_definition.
    const ended = collect().collector;
    ended.line(JSON.stringify({ type: 'start' }));
    ended.line(JSON.stringify({ type: 'end' }));
    expect(ended.finishRest({ limit: null, aborted: false, stderr: '' }).map((r) => r.code)).toEqual([
      'invalid_definition',
      'invalid_definition',
    ]);
  });
});
