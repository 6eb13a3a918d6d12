/**
 * Setup projects are visible (docs/PLAYWRIGHT.md, "Setup projects"): a project whose tests depend on
 * a setup project that passes (two setup tests) and on one that fails (one setup test). Through the
 * real API, worker, sandbox and Chromium: the suite run lists its setup tests (API and view) without
 * counting them, a dependant of the failed setup links to it (API and its run page), `testrun run`
 * prints them, and its JUnit holds as many test cases as Playwright's own junit reporter writes for
 * the same project, run here on the host.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import type { RunReport } from '@testrun/contracts';
import { usePlaywrightWorker } from '../e2e/playwright-site';
import { apiClient } from '../e2e/support';
import { createTenant } from '../support/harness';
import { runCliHere } from './cli-harness';

jest.setTimeout(300_000);

const FIXTURE = path.resolve(__dirname, '../fixtures/pw-setup');
const parts = usePlaywrightWorker({ WORKER_CONCURRENCY: '1' });

type Case = { name: string; classname: string };
type Suite = { name: string; hostname: string; tests: string; failures: string; testcase: Case[] };

function parseJunit(xml: string): { tests: string; suites: Suite[] } {
  expect(XMLValidator.validate(xml)).toBe(true);
  const parsed = new XMLParser({
    ignoreAttributes: false,
    attributeNamePrefix: '',
    isArray: (name) => name === 'testsuite' || name === 'testcase',
  }).parse(xml) as { testsuites: { tests: string; testsuite: Suite[] } };
  return { tests: parsed.testsuites.tests, suites: parsed.testsuites.testsuite };
}

/** Each test case as `project suite | classname | name` (the files relative to the config's testDir, as Playwright names them). */
function casesOf(suites: Suite[]): string[] {
  return suites.flatMap((s) => s.testcase.map((c) => `${s.hostname} ${s.name} | ${c.classname} | ${c.name}`)).sort();
}

/** Playwright's own junit reporter on the fixture's config, on the host. */
async function playwrightJunit(dir: string): Promise<string> {
  const output = path.join(dir, 'playwright-junit.xml');
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('JEST_')));
  const config = path.join(FIXTURE, 'e2e/playwright.config.ts');
  await promisify(execFile)(
    process.execPath,
    [require.resolve('@playwright/test/cli'), 'test', '--config', config, '--reporter=junit', '--output', dir],
    { env: { ...env, CI: '1', FORCE_COLOR: '0', PLAYWRIGHT_JUNIT_OUTPUT_NAME: output } },
  ).catch((error: unknown) => error); // its broken setup fails the run (exit 1)
  return readFileSync(output, 'utf8');
}

/** A view link (the service's public URL) on this test's API. */
function here(link: string): string {
  const url = new URL(link);
  return `${parts.api.url}${url.pathname}${url.search}`;
}

let dir: string;
let env: Record<string, string>;
let key: string;

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), 'testrun-pw-setup-'));
  const tenant = await createTenant(parts.db, { scopes: ['run', 'preview', 'deploy'] });
  key = tenant.key;
  env = { TESTRUN_API_URL: parts.api.url, TESTRUN_API_KEY: tenant.key };
  const deployed = await runCliHere(['deploy', '--file', path.join(FIXTURE, 'testrun.yaml')], env);
  expect(deployed).toMatchObject({ code: 0 });
});

afterAll(() => rmSync(dir, { recursive: true, force: true }));

it('shows the setup tests of a suite run in the API, the view, testrun run and its JUnit', async () => {
  const junit = path.join(dir, 'junit.xml');
  const args = ['run', '--project', 'pw-setup', '--suite', 'all', '--base-url', parts.site.url, '--junit', junit];
  const run = await runCliHere([...args, '--poll-interval', '300ms', '--json'], env);
  // The guarded test ended setup_failed: an error.
  expect(run.code).toBe(2);
  const report = JSON.parse(run.stdout) as RunReport;

  // The API: the suite run's four tests are counted, its three setup tests listed apart.
  const client = apiClient(parts.api.url, key);
  const suiteRun = await client.getSuiteRun(report.suiteRunId ?? '');
  expect([suiteRun.total_count, suiteRun.passed_count, suiteRun.error_count]).toEqual([4, 3, 1]);
  const setups = suiteRun.setup_tests ?? [];
  expect(setups.map((s) => [s.name, s.status]).sort()).toEqual([
    ['[broken-setup] › seed the catalog', 'failed'],
    ['[setup] › create the admin account', 'passed'],
    ['[setup] › take the database snapshot', 'passed'],
  ]);
  const broken = setups.find((s) => s.status === 'failed');
  expect(broken).toMatchObject({
    location: { file: 'e2e/tests/catalog.setup.ts', line: 3, project: 'broken-setup', titlePath: ['seed the catalog'] },
    failure: { message: expect.stringMatching(/products inserted/) as unknown },
  });
  for (const s of setups) expect(s.executions).toBeGreaterThanOrEqual(1);

  // The dependant of the failed setup links to it.
  const guardedEntry = suiteRun.tests.find((t) => t.name === 'sells from the catalog');
  const guarded = await client.getRun(guardedEntry?.runId ?? '');
  expect(guarded).toMatchObject({ status: 'error', error: { code: 'setup_failed' } });
  expect(guarded.failed_setup).toEqual({
    id: broken?.id,
    name: '[broken-setup] › seed the catalog',
    status: 'failed',
    result_summary: broken?.result_summary,
    location: broken?.location,
  });
  const orders = await client.getRun(suiteRun.tests.find((t) => t.name === 'orders › lists the orders')?.runId ?? '');
  expect(orders.failed_setup).toBeUndefined();

  // The view: the suite page's setup section with the failing step's error; the run page's link to it.
  const suitePage = await (await fetch(here(suiteRun.suiteRunUrl))).text();
  expect(suitePage).toMatch(/<h2 id="setup-tests-heading">\s*Setup tests/);
  for (const s of setups) expect(suitePage).toContain(`id="setup-${s.id}"`);
  expect(suitePage).toContain('insert the products');
  expect(suitePage).toMatch(/products inserted/);
  const guardedReport = report.tests.find((t) => t.runId === guarded.id);
  const runPage = await (await fetch(here(guardedReport?.viewUrl ?? ''))).text();
  const link = /<p class="failed-setup" data-failed-setup="([^"]+)">[^]*?<a href="([^"]+)">/.exec(runPage);
  expect(link?.[1]).toBe(broken?.id);
  const target = new URL((link?.[2] ?? '').replace(/&amp;/g, '&'), parts.api.url);
  expect(target.hash).toBe(`#setup-${broken?.id}`);
  expect((await fetch(target)).status).toBe(200);

  // testrun run: each setup test printed as it ended, the failed one's error at the end.
  expect(run.stderr).toMatch(/ {2}passed {2}\[setup\] › e2e\/tests\/admin\.setup\.ts › create the admin account \(/);
  expect(run.stderr).toMatch(/ {2}FAILED {2}\[broken-setup\] › e2e\/tests\/catalog\.setup\.ts › seed the catalog \(/);
  expect(run.stderr).toMatch(/\nFAILED \[broken-setup\] › e2e\/tests\/catalog\.setup\.ts › seed the catalog: [^\n]+/);
  expect(report.message).toMatch(/; setup tests \(not counted\): 2 passed, 1 failed\.$/);
  expect(report.setupTests?.map((s) => s.id).sort()).toEqual(setups.map((s) => s.id).sort());

  // JUnit: the test cases Playwright's own junit reporter writes for the same project, setup tests included.
  const ours = parseJunit(readFileSync(junit, 'utf8'));
  const theirs = parseJunit(await playwrightJunit(dir));
  expect(ours.tests).toBe('7');
  expect(ours.tests).toBe(theirs.tests);
  expect(casesOf(ours.suites)).toEqual(casesOf(theirs.suites));
  const catalog = ours.suites.find((s) => path.basename(s.name) === 'catalog.setup.ts');
  expect(catalog).toMatchObject({ hostname: 'broken-setup', tests: '1', failures: '1' });
});
