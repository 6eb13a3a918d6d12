import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { agrees, compare, formatTable } from '../../bench/parity/compare';
import { parseArgs } from '../../bench/parity/index';
import { compareJunit, readJunit } from '../../bench/parity/junit-compare';
import { globToFilter, readReport, selectorArgs } from '../../bench/parity/playwright-side';
import type { ServiceResult } from '../../bench/parity/service-side';

/* The parity harness's own logic: reading Playwright's JSON report, matching tests, the verdict. */

const report = {
  config: {
    rootDir: '/repo/e2e',
    projects: [{ name: 'setup' }, { name: 'chromium', dependencies: ['setup'] }],
  },
  suites: [
    {
      title: 'auth.setup.ts',
      specs: [
        {
          title: 'signs in',
          file: 'auth.setup.ts',
          tests: [{ projectName: 'setup', status: 'expected', results: [{ status: 'passed', duration: 100 }] }],
        },
      ],
    },
    {
      title: 'cart.spec.ts',
      suites: [
        {
          title: 'cart',
          specs: [
            {
              title: 'adds',
              file: 'cart.spec.ts',
              tests: [
                {
                  projectName: 'chromium',
                  status: 'flaky',
                  results: [
                    { status: 'failed', duration: 200, error: { message: 'first' } },
                    { status: 'passed', duration: 300 },
                  ],
                },
              ],
            },
            {
              title: 'removes',
              file: 'cart.spec.ts',
              tests: [
                {
                  projectName: 'chromium',
                  status: 'unexpected',
                  results: [
                    { status: 'failed', duration: 50, error: { message: '\u001b[31mexpect(received)\u001b[39m\n…' } },
                  ],
                },
              ],
            },
          ],
        },
      ],
    },
  ],
};

const service = (titlePath: string[], status: string, extra: Partial<ServiceResult> = {}): ServiceResult => ({
  file: '/repo/e2e/cart.spec.ts',
  project: 'chromium',
  titlePath,
  status,
  outcomeCode: null,
  summary: status,
  message: null,
  durationMs: 1000,
  retry: 0,
  ...extra,
});

test('a JSON report reads as tests with absolute files, describe titles, outcomes, tries and the first error line', () => {
  const read = readReport(JSON.stringify(report));
  expect(read.setupProjects).toEqual(new Set(['setup']));
  expect(read.errors).toEqual([]);
  expect(read.tests).toEqual([
    {
      file: '/repo/e2e/auth.setup.ts',
      project: 'setup',
      titlePath: ['signs in'],
      outcome: 'expected',
      status: 'passed',
      durationMs: 100,
      tries: 1,
    },
    {
      file: '/repo/e2e/cart.spec.ts',
      project: 'chromium',
      titlePath: ['cart', 'adds'],
      outcome: 'flaky',
      status: 'passed',
      durationMs: 500,
      tries: 2,
    },
    {
      file: '/repo/e2e/cart.spec.ts',
      project: 'chromium',
      titlePath: ['cart', 'removes'],
      outcome: 'unexpected',
      status: 'failed',
      durationMs: 50,
      tries: 1,
      error: 'expect(received)',
    },
  ]);
});

test("Playwright's outcomes agree with the service's statuses as docs/PLAYWRIGHT.md's Outcomes table says", () => {
  expect(agrees('expected', 'passed')).toBe(true);
  expect(agrees('flaky', 'passed')).toBe(true);
  expect(agrees('unexpected', 'failed')).toBe(true);
  expect(agrees('unexpected', 'error')).toBe(true);
  expect(agrees('skipped', 'skipped')).toBe(true);
  expect(agrees('expected', 'error')).toBe(false);
  expect(agrees('unexpected', 'passed')).toBe(false);
  expect(agrees('skipped', 'passed')).toBe(false);
});

test('tests match by file, project and title path; a setup test without a run is no mismatch, a missing test is', () => {
  const { tests, setupProjects } = readReport(JSON.stringify(report));
  const rows = compare(
    '/repo',
    tests,
    [
      service(['cart', 'adds'], 'passed', { retry: 1 }),
      service(['cart', 'removes'], 'passed'),
      service(['cart', 'only here'], 'failed'),
    ],
    setupProjects,
  );
  expect(rows.map((r) => [r.file, r.title, r.match])).toEqual([
    ['e2e/auth.setup.ts', 'signs in', 'setup'],
    ['e2e/cart.spec.ts', 'cart › adds', 'yes'],
    ['e2e/cart.spec.ts', 'cart › removes', 'no'],
    ['e2e/cart.spec.ts', 'cart › only here', 'no'],
  ]);
  expect(rows[1]?.testrun).toBe('passed retry 1 1.0 s');
  expect(rows[2]?.why).toBe('playwright: expect(received); testrun: passed');
  const table = formatTable(rows);
  expect(table.split('\n')[0]).toMatch(/^file +title +project +playwright +testrun +match$/);
  expect(table).toContain('Mismatches:\n- e2e/cart.spec.ts › cart › removes [chromium]: playwright: expect(received)');
});

test("a suite's selector becomes playwright test's filters, files first", () => {
  expect(globToFilter('e2e/tests/**/*.spec.ts')).toBe('e2e/tests/.*[^/]*\\.spec\\.ts$');
  expect(selectorArgs({ project: 'chromium', grep: '@smoke', grepInvert: 'slow', files: ['a/*.ts'] })).toEqual([
    'a/[^/]*\\.ts$',
    '--project',
    'chromium',
    '--grep',
    '@smoke',
    '--grep-invert',
    'slow',
  ]);
});

test('the command line takes the repository, config, base URL, project file, and --env more than once', () => {
  const options = parseArgs([
    '--repo',
    '/r',
    '--config',
    'e2e/pw.config.ts',
    '--base-url',
    'http://127.0.0.1:5050',
    '--file',
    '/f/testrun.yaml',
    '--env',
    'A=1',
    '--env',
    'B=x=y',
    '--worker-env',
    'PLAYWRIGHT_CODE_CACHE=off',
    '--playwright-report',
    '/k/report.json',
  ]);
  expect(options).toEqual({
    repo: '/r',
    config: 'e2e/pw.config.ts',
    baseUrl: 'http://127.0.0.1:5050',
    file: '/f/testrun.yaml',
    suite: undefined,
    env: { A: '1', B: 'x=y' },
    workerEnv: { PLAYWRIGHT_CODE_CACHE: 'off' },
    slots: 2,
    playwrightReport: '/k/report.json',
  });
  expect(() => parseArgs(['--repo', '/r'])).toThrow(/usage: pnpm bench parity/);
  expect(() =>
    parseArgs([...['--repo', '/r', '--config', 'c', '--base-url', 'u', '--file', 'f'], '--env', 'NOEQ']),
  ).toThrow(/NAME=VALUE/);
});

describe('JUnit on both sides', () => {
  const write = (xml: string) => {
    const file = path.join(mkdtempSync(path.join(tmpdir(), 'parity-junit-')), 'junit.xml');
    writeFileSync(file, xml);
    return file;
  };
  const playwright = write(`<?xml version="1.0" encoding="UTF-8"?>
<testsuites tests="3">
<testsuite name="cart.spec.ts" hostname="chromium" tests="3">
<testcase name="cart › adds" classname="cart.spec.ts" time="0.5"></testcase>
<testcase name="cart › removes" classname="cart.spec.ts" time="0.5"><failure message="x" type="FAILURE">x</failure></testcase>
<testcase name="cart › pays" classname="cart.spec.ts" time="0"><skipped/></testcase>
</testsuite>
</testsuites>`);
  const testrun = write(`<?xml version="1.0" encoding="UTF-8"?>
<testsuites tests="3">
<testsuite name="cart.spec.ts" hostname="chromium" tests="3">
<testcase name="cart › adds" classname="cart.spec.ts" file="cart.spec.ts" time="0.4"/>
<testcase name="cart › removes" classname="cart.spec.ts" file="cart.spec.ts" time="0.4"/>
<testcase name="cart › empties" classname="cart.spec.ts" file="cart.spec.ts" time="0.1"/>
</testsuite>
</testsuites>`);

  it('reads each test case with its verdict', () => {
    expect(readJunit(playwright).map((c) => [c.suite, c.classname, c.name, c.verdict])).toEqual([
      ['cart.spec.ts', 'cart.spec.ts', 'cart › adds', 'passed'],
      ['cart.spec.ts', 'cart.spec.ts', 'cart › removes', 'failure'],
      ['cart.spec.ts', 'cart.spec.ts', 'cart › pays', 'skipped'],
    ]);
  });

  it('names each case one side lacks and each pair whose verdict differs', () => {
    const result = compareJunit(readJunit(playwright), readJunit(testrun));
    expect(result).toEqual({
      playwright: 3,
      testrun: 3,
      same: 1,
      differences: [
        "cart.spec.ts | cart.spec.ts | cart › removes: Playwright's failure (file -), testrun's passed (file cart.spec.ts)",
        "only in Playwright's: cart.spec.ts | cart.spec.ts | cart › pays",
        "only in testrun's: cart.spec.ts | cart.spec.ts | cart › empties",
      ],
    });
  });
});
