import { XMLParser, XMLValidator } from 'fast-xml-parser';
import type { ReportTest, RunReport, TestLocation } from '@testrun/contracts';
import { buildJunitXml } from './junit';

// JUnit of Playwright tests as Playwright's junit reporter writes it, read back with a real XML
// parser: one <testsuite> per spec file (and Playwright project), names as title paths, the spec
// file as classname and file, the run's view as an [[ATTACHMENT|…]] line.

const at = (file: string, titlePath: string[], project = '', line = 3): TestLocation => ({
  file,
  line,
  column: 5,
  titlePath,
  project,
});

const test = (runId: string, status: ReportTest['status'], extra: Partial<ReportTest> = {}): ReportTest => ({
  runId,
  name: `name of ${runId}`,
  status,
  result_summary: `${status} summary`,
  error: null,
  skip_reason: null,
  flaky: false,
  attempts: 1,
  previous_attempts: [],
  viewUrl: null,
  durationMs: 1000,
  ...extra,
});

const report = (tests: ReportTest[]): RunReport => ({
  kind: 'suite',
  project: 'shop',
  suite: 'e2e',
  testId: null,
  suiteRunId: 'srun_1',
  runIds: [],
  suiteRunUrl: 'http://t/view/suite-runs/srun_1/x',
  status: 'failed',
  counts: { total: tests.length, queued: 0, running: 0, passed: 2, failed: 1, error: 0, skipped: 1 },
  timedOut: false,
  durationMs: 9000,
  exitCode: 1,
  message: '',
  idempotencyKey: 'k-1',
  replayed: false,
  tests,
});

const parser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: '',
  isArray: (name) => ['testsuite', 'testcase', 'property', 'rerunFailure', 'flakyFailure'].includes(name),
});

type Case = { name: string; classname: string; file?: string; time?: string; failure?: { '#text': string } } & Record<
  string,
  unknown
>;
type Suite = {
  name: string;
  hostname?: string;
  tests: string;
  failures: string;
  errors: string;
  skipped: string;
  testcase: Case[];
};

function parse(xml: string): Suite[] {
  expect(XMLValidator.validate(xml)).toBe(true);
  return (parser.parse(xml) as { testsuites: { testsuite: Suite[] } }).testsuites.testsuite;
}

describe('JUnit of Playwright tests', () => {
  const tests = [
    test('run_a', 'passed', { location: at('tests/cart.spec.ts', ['cart', 'adds an item']) }),
    test('run_b', 'failed', {
      location: at('tests/login.spec.ts', ['login', 'signs <in>'], '', 12),
      result_summary: 'expect(locator).toHaveText failed: expected "Welcome" received "Oops"',
      viewUrl: 'http://t/view/runs/run_b/x?a=1&b=2',
      previous_attempts: [
        {
          attempt: 1,
          status: 'failed',
          result_summary: 'first try failed',
          error: null,
          started_at: '2026-01-01T00:00:00.000Z',
          finished_at: '2026-01-01T00:00:01.000Z',
          duration_ms: 1000,
        },
      ],
    }),
    test('run_c', 'passed', { location: at('tests/cart.spec.ts', ['cart', 'removes an item']) }),
    test('run_d', 'skipped', { location: at('tests/cart.spec.ts', ['cart', 'checks out'], 'firefox') }),
  ];

  it('writes a testsuite per spec file and project, named as Playwright names its tests', () => {
    const suites = parse(buildJunitXml(report(tests), new Date('2026-01-01T00:00:00Z')));
    expect(suites.map((s) => [s.name, s.hostname, s.tests, s.failures, s.skipped])).toEqual([
      ['tests/cart.spec.ts', undefined, '2', '0', '0'],
      ['tests/login.spec.ts', undefined, '1', '1', '0'],
      ['tests/cart.spec.ts', 'firefox', '1', '0', '1'],
    ]);
    const [cart, login] = suites;
    expect(cart?.testcase.map((c) => [c.name, c.classname, c.file, c.time])).toEqual([
      ['cart › adds an item', 'tests/cart.spec.ts', 'tests/cart.spec.ts', '1.000'],
      ['cart › removes an item', 'tests/cart.spec.ts', 'tests/cart.spec.ts', '1.000'],
    ]);
    const failed = login?.testcase[0];
    expect(failed?.name).toBe('login › signs <in>');
    // The failure's body starts where Playwright's does: file:line:column › title, then the error.
    expect(failed?.failure?.['#text']).toMatch(
      /^tests\/login\.spec\.ts:12:5 › login › signs <in>\nexpect\(locator\)\.toHaveText failed: expected "Welcome" received "Oops"\n/,
    );
    expect(failed?.['system-out']).toBe('[[ATTACHMENT|http://t/view/runs/run_b/x?a=1&b=2]]');
    expect(failed?.rerunFailure).toHaveLength(1);
  });

  it("names spec files from the config's rootDir, as Playwright's reporter does, and keeps the bundle's path in file", () => {
    const inSrc = (run: string, title: string) =>
      test(run, 'failed', {
        location: { ...at('src/tools/csv.e2e.spec.ts', ['csv', title], '', 4), rootDir: 'src' },
        result_summary: 'failed',
      });
    const [suite] = parse(buildJunitXml(report([inSrc('run_x', 'converts'), inSrc('run_y', 'parses')])));
    expect(suite?.name).toBe('tools/csv.e2e.spec.ts');
    expect(suite?.testcase.map((c) => [c.classname, c.file])).toEqual([
      ['tools/csv.e2e.spec.ts', 'src/tools/csv.e2e.spec.ts'],
      ['tools/csv.e2e.spec.ts', 'src/tools/csv.e2e.spec.ts'],
    ]);
    expect(suite?.testcase[0]?.failure?.['#text']).toMatch(/^tools\/csv\.e2e\.spec\.ts:4:5 › csv › converts\n/);
  });

  it("adds an [[ATTACHMENT|…]] line for each file the test attached, linked under its run's view", () => {
    const attached = test('run_e', 'failed', {
      location: at('tests/att.spec.ts', ['attaches']),
      viewUrl: 'http://t/view/runs/run_e/tok',
      attachments: [
        { id: 'art_1', name: 'screenshot', content_type: 'image/png', size_bytes: 10 },
        { id: 'art_2', name: 'notes <1>', content_type: 'text/plain', size_bytes: 3 },
      ],
    });
    const [suite] = parse(buildJunitXml(report([attached])));
    expect(suite?.testcase[0]?.['system-out']).toBe(
      [
        '[[ATTACHMENT|http://t/view/runs/run_e/tok]]',
        '[[ATTACHMENT|http://t/view/runs/run_e/tok/artifacts/art_1]]',
        '[[ATTACHMENT|http://t/view/runs/run_e/tok/artifacts/art_2]]',
      ].join('\n'),
    );
  });

  it('keeps step tests in one suite of their own, as before', () => {
    const xml = buildJunitXml(report([test('run_s', 'passed'), ...tests]));
    const suites = parse(xml);
    expect(suites[0]?.name).toBe('shop/e2e');
    expect(suites[0]?.testcase.map((c) => [c.name, c.classname, c.file])).toEqual([
      ['name of run_s', 'shop/e2e', undefined],
    ]);
    expect(suites).toHaveLength(4);
  });

  it("writes a suite run's setup tests as Playwright does: first, a testsuite per setup file, in the totals", () => {
    const setup = {
      id: 'setup_1',
      name: '[setup] › seeds the shop',
      status: 'failed' as const,
      result_summary: 'Failed at step 1: seed refused',
      error: null,
      failure: {
        message: 'Error: expect(received).toBe(expected) // Object.is equality\n\nExpected: 2\nReceived: 0',
        expected: '2',
        received: '0',
        location: 'auth.setup.ts:4',
      },
      location: at('auth.setup.ts', ['seeds the shop'], 'setup', 2),
      duration_ms: 500,
      executions: 2,
      failed_executions: 1,
      started_at: '2026-01-01T00:00:00.000Z',
      finished_at: '2026-01-01T00:00:00.500Z',
      viewUrl: 'http://t/view/suite-runs/srun_1/x#setup-setup_1',
    };
    const xml = buildJunitXml({ ...report(tests), setupTests: [setup] }, new Date('2026-01-01T00:00:00Z'));
    expect(xml).toMatch(/<testsuites name="testrun" tests="5" failures="2" /);
    const [first, ...rest] = parse(xml);
    expect([first?.name, first?.hostname, first?.tests, first?.failures]).toEqual(['auth.setup.ts', 'setup', '1', '1']);
    expect(first?.testcase[0]?.name).toBe('seeds the shop');
    expect(first?.testcase[0]?.failure?.['#text']).toMatch(
      /^auth\.setup\.ts:2:5 › seeds the shop\n[^]*Received: 0\nSetup test: setup_1\n/,
    );
    expect(first?.testcase[0]?.['system-out']).toBe('[[ATTACHMENT|http://t/view/suite-runs/srun_1/x#setup-setup_1]]');
    expect(rest).toHaveLength(3);
  });

  it("writes a Playwright test's failure or error as Playwright's reporter classifies it, in the counts too", () => {
    const failed = (runId: string, message: string, code: string, status: ReportTest['status'] = 'failed') =>
      test(runId, status, {
        location: at('tests/a.spec.ts', [runId]),
        error: { code: code as 'timeout', message, step: 2 },
        ...(status === 'failed' ? { failure: { message, expected: null, received: null, location: null } } : {}),
      });
    const tests = [
      failed('matcher', 'Error: expect(locator).not.toBeVisible() failed\n\nLocator: #x', 'expectation_failed'),
      failed('locator', 'TimeoutError: locator.click: Timeout 5000ms exceeded.\nCall log:', 'element_not_found'),
      failed('thrown', 'Error: boom\n    at tests/a.spec.ts:9:11', 'test_code_error', 'error'),
      failed('lost', 'The worker running the test was lost.', 'worker_lost', 'error'),
    ];
    const xml = buildJunitXml({
      ...report(tests),
      counts: { total: 4, queued: 0, running: 0, passed: 0, failed: 2, error: 2, skipped: 0 },
    });
    const [suite] = parse(xml);
    const cases = new Map(suite?.testcase.map((c) => [c.name, c]));
    expect(cases.get('matcher')?.failure).toMatchObject({
      message: 'expect(locator).not.toBeVisible() failed',
      type: 'expect.not.toBeVisible',
    });
    expect(cases.get('locator')?.error).toMatchObject({
      message: 'locator.click: Timeout 5000ms exceeded.',
      type: 'TimeoutError',
    });
    expect(cases.get('thrown')?.error).toMatchObject({ message: 'boom', type: 'Error' });
    // The service's own error is not Playwright's to classify: its code and summary, as before.
    expect(cases.get('lost')?.error).toMatchObject({ message: 'error summary', type: 'worker_lost' });
    expect([suite?.failures, suite?.errors]).toEqual(['1', '3']);
    expect(xml).toMatch(/<testsuites name="testrun" tests="4" failures="1" errors="3" /);
  });
});
