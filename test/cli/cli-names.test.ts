/**
 * End to end: what `testrun run`, `status`, `runs`, `suite-runs` and the JUnit report call a test,
 * and how they show a test that passed only on a retry, against a real API process and a real
 * worker process (real Postgres, Redis and Chromium) testing the fixture site. Test and project
 * mode name each test by its name, as suite mode does; a flaky pass is marked wherever its status
 * or a pass count is shown.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { XMLParser } from 'fast-xml-parser';
import type { Db } from '@testrun/core/db';
import type { ProjectFile } from '@testrun/contracts';
import { nth, parsed, wire } from '../api/typed';
import { startFixtureSite, type FixtureSite } from '../fixtures/site';
import { applySampleProject, createTenant, testDb } from '../support/harness';
import { freePort, runCli, startService, waitReady, type CliResult, type ServiceProcess } from './cli-harness';

jest.setTimeout(120_000);

let db: Db;
let site: FixtureSite;
let api: ServiceProcess;
let worker: ServiceProcess;
let apiUrl: string;
let tenant: Awaited<ReturnType<typeof createTenant>>;
let homeTestId: string;
let flakyTestId: string;
const dir = mkdtempSync(path.join(tmpdir(), 'testrun-cli-names-'));
const cleanups: Array<() => Promise<unknown>> = [];

/** A test whose page fails its first load (per `key`) and passes on the retry. */
function flakyTest(name: string, key: string): ProjectFile['suites'][number]['tests'][number] {
  return {
    key: 'flaky',
    name,
    steps: [
      { action: 'goto', url: `/flaky?key=${key}&fails=1` },
      { action: 'expectText', selector: 'h1', text: 'Ready', timeoutMs: 500 },
    ],
  };
}

beforeAll(async () => {
  db = testDb();
  cleanups.push(() => db.$disconnect());
  site = await startFixtureSite();
  cleanups.push(() => site.close());
  tenant = await createTenant(db);
  const home = {
    key: 'home',
    name: 'Home page shows the shop',
    timeoutMs: 15_000,
    steps: [
      { action: 'goto' as const, url: '/' },
      { action: 'expectText' as const, selector: 'h1', text: 'Testrun Shop', timeoutMs: 3_000 },
    ],
  };
  const applied = await applySampleProject(db, tenant.workspace.id, {
    slug: 'names',
    name: 'Names',
    baseUrl: site.url,
    suites: [{ slug: 'main', name: 'Main', tests: [home, flakyTest('Stock page settles', `names-${tenant.tag}`)] }],
  });
  const tests = nth(applied.suites, 0).tests;
  homeTestId = nth(tests, 0).id;
  flakyTestId = nth(tests, 1).id;
  await applySampleProject(db, tenant.workspace.id, {
    slug: 'suiteflaky',
    name: 'Suite flaky',
    baseUrl: site.url,
    suites: [{ slug: 'once', name: 'Once', tests: [flakyTest('Cart total settles', `suite-${tenant.tag}`)] }],
  });
  const port = await freePort();
  apiUrl = `http://127.0.0.1:${port}`;
  api = startService('api', { PORT: String(port), PUBLIC_BASE_URL: apiUrl, LOG_LEVEL: 'warn' });
  worker = startService('worker', { WORKER_CONCURRENCY: '2', WORKER_VIDEO: 'off', LOG_LEVEL: 'warn' });
  cleanups.push(() => Promise.all([api.stop(), worker.stop()]));
  await waitReady(`${apiUrl}/readyz`, api);
});

afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

const env = () => ({ TESTRUN_API_URL: apiUrl, TESTRUN_API_KEY: tenant.key });
const cli = (args: string[]) => runCli(args, env());
const run = (args: string[]) => cli(['run', '--poll-interval', '300ms', ...args]);
const report = (r: CliResult) => parsed(wire.runReport, JSON.parse(r.stdout));

type Testcase = { name: string; 'system-out'?: string; flakyFailure?: { type: string } };
function junitOf(file: string) {
  const xml = new XMLParser({
    ignoreAttributes: false,
    attributeNamePrefix: '',
    isArray: (name) => name === 'testcase' || name === 'property',
  }).parse(readFileSync(file, 'utf8')) as {
    testsuites: { testsuite: { testcase: Testcase[]; properties: { property: { name: string; value: string }[] } } };
  };
  return xml.testsuites.testsuite;
}

describe('test names and flaky passes, in test and project mode', () => {
  let flakyRunId: string;

  it('project mode names each test by its name, and marks the one that passed on a retry (output, --json, JUnit)', async () => {
    const junit = path.join(dir, 'project.xml');
    const r = await run(['--project', 'names', '--retries', '1', '--junit', junit, '--json']);
    expect(r.code).toBe(0);
    const doc = report(r);
    expect(doc.tests.map((t) => [t.name, t.status, t.flaky, t.attempts]).sort()).toEqual([
      ['Home page shows the shop', 'passed', false, 1],
      ['Stock page settles', 'passed', true, 2],
    ]);
    flakyRunId = doc.tests.find((t) => t.flaky)?.runId ?? '';
    expect(doc.message).toBe('The project passed: 2 passed (1 flaky), 0 failed, 0 error, 0 skipped (2/2 finished).');
    // Progress and the closing lines speak of tests by name, never by run id.
    expect(r.stderr).toMatch(/passed {2}Home page shows the shop \(\d[^)]*\)\n/);
    expect(r.stderr).toMatch(/passed {2}Stock page settles \(flaky: passed on retry 1\) \(\d[^)]*\)\n/);
    expect(r.stderr).toMatch(
      /FLAKY {2}Stock page settles: passed \(flaky: passed on retry 1\); attempt 1 failed: .+\n/,
    );
    for (const id of doc.runIds) expect(r.stderr).not.toMatch(new RegExp(`(passed|FLAKY) +${id}`));

    const suite = junitOf(junit);
    expect(suite.testcase.map((t) => t.name).sort()).toEqual(['Home page shows the shop', 'Stock page settles']);
    const flaky = suite.testcase.find((t) => t.name === 'Stock page settles');
    expect(flaky?.flakyFailure?.type).toBe('failed');
    expect(flaky?.['system-out']).toMatch(/^Flaky: passed on retry 1 \(attempt 1 failed: .+\)\nView: http/);
    expect(suite.properties.property).toContainEqual({ name: 'flaky', value: '1' });
  });

  it('single-test mode names the test by its name in the output and the JUnit testcase', async () => {
    const junit = path.join(dir, 'single.xml');
    const r = await run(['--test', homeTestId, '--junit', junit]);
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/passed {2}Home page shows the shop \(\d[^)]*\)\n/);
    expect(nth(junitOf(junit).testcase, 0).name).toBe('Home page shows the shop');
  });

  it('`testrun status` of a run names its test and marks a flaky pass with its earlier attempts', async () => {
    const s = await cli(['status', flakyRunId]);
    expect(s.code).toBe(0);
    const lines = s.stdout.split('\n');
    expect(lines[0]).toBe(
      `Run ${flakyRunId} of "Stock page settles" (${flakyTestId}): passed (flaky: passed on retry 1)`,
    );
    expect(lines).toContainEqual(expect.stringMatching(/^ {2}attempt 1 failed: .+/));
  });

  it('`testrun runs` marks the flaky run in its status column', async () => {
    const r = await cli(['runs', '--test', flakyTestId]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(new RegExp(`${flakyRunId} +passed \\(flaky: passed on retry 1\\) +.+Stock page settles`));
    const home = await cli(['runs', '--test', homeTestId]);
    expect(home.stdout).not.toContain('flaky');
  });

  it('`testrun status` and `testrun suite-runs` of a suite run count and mark its flaky test', async () => {
    const r = await run(['--project', 'suiteflaky', '--suite', 'once', '--retries', '1', '--json']);
    expect(r.code).toBe(0);
    const srun = report(r).suiteRunId ?? '';
    const s = await cli(['status', srun]);
    expect(s.stdout).toContain('1 passed (1 flaky: passed only on a retry), 0 failed, 0 error, 0 skipped of 1');
    expect(s.stdout).toMatch(/passed {3}Cart total settles \(run_\w+\) \(flaky: passed on retry 1\)/);
    const list = await cli(['suite-runs', '--project', 'suiteflaky']);
    expect(list.stdout.split('\n')[0]).toMatch(/PASSED\/FAILED\/ERROR\/SKIPPED\s+FLAKY$/);
    expect(list.stdout).toMatch(new RegExp(`${srun}\\s+passed\\s+.+suiteflaky/once\\s+1/0/0/0 of 1\\s+1\\n`));
  });
});
