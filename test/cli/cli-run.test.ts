/**
 * End to end: `testrun run|status` against a real API process and a real worker process (real
 * Postgres, Redis and Chromium), testing a real fixture site. The first test runs the published
 * binary as a process; the others run the same program in this process (cli-harness.ts's
 * runCliHere), which saves starting node for each. One worker and one API per file; a second API
 * process with a low rate limit in windows of a few seconds shares the worker for the 429 test.
 * Over 300 lines on purpose: those processes take seconds to start, so every CLI case shares them
 * in this one file.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { XMLParser } from 'fast-xml-parser';
import type { Db } from '@testrun/core/db';
import type { ProjectFile } from '@testrun/contracts';
import { nth, parsed, wire, type Validator } from '../api/typed';
import { startFixtureSite, type FixtureSite } from '../fixtures/site';
import { applySampleProject, createTenant, testDb } from '../support/harness';
import {
  accessLog,
  freePort,
  protectedPreviewTest,
  runCli,
  runCliHere,
  startService,
  waitReady,
  type CliResult,
  type ServiceProcess,
} from './cli-harness';

jest.setTimeout(180_000);

/** The rate-limit window of the second API process (RATE_LIMIT_WINDOW_MS; a minute by default). */
const LIMITED_WINDOW_MS = 3_000;

const BASIC = `Basic ${Buffer.from('demo:preview').toString('base64')}`;
const SECRET_PARTS = [BASIC, Buffer.from('demo:preview').toString('base64')];

function projectFile(slug: string, site: string): ProjectFile {
  const home = (key: string) => ({
    key,
    name: `Home page ${key}`,
    timeoutMs: 15_000,
    steps: [
      { action: 'goto' as const, url: '/' },
      { action: 'expectText' as const, selector: 'h1', text: 'Testrun Shop', timeoutMs: 3_000 },
    ],
  });
  const mismatch = {
    key: 'mismatch',
    name: 'Heading says <Welcome> & "hello"',
    timeoutMs: 15_000,
    steps: [
      { action: 'goto' as const, url: '/' },
      { action: 'expectText' as const, selector: 'h1', text: 'Welcome', timeoutMs: 1_000 },
    ],
  };
  const disabled = {
    key: 'disabled',
    name: 'Disabled test',
    enabled: false,
    steps: [{ action: 'goto' as const, url: '/' }],
  };
  return {
    slug,
    name: `CLI ${slug}`,
    baseUrl: site,
    suites: [
      {
        slug: 'pass',
        name: 'Pass',
        tests: [home('home'), protectedPreviewTest()],
      },
      { slug: 'fail', name: 'Fail', tests: [home('home'), mismatch, disabled] },
      {
        slug: 'error',
        name: 'Error',
        tests: [
          {
            key: 'unreachable',
            name: 'Unreachable target',
            timeoutMs: 15_000,
            steps: [{ action: 'goto', url: 'http://127.0.0.1:2/' }],
          },
        ],
      },
      { slug: 'skipped', name: 'Skipped', tests: [disabled] },
      {
        slug: 'slow',
        name: 'Slow',
        tests: [
          { key: 'slow', name: 'Slow page', timeoutMs: 4_000, steps: [{ action: 'goto', url: '/slow?ms=20000' }] },
        ],
      },
      {
        slug: 'slowpass',
        name: 'Slow but passing',
        tests: [
          {
            key: 'slowpass',
            name: 'Slow page that answers',
            timeoutMs: 15_000,
            steps: [
              { action: 'goto', url: '/slow?ms=3000' },
              { action: 'expectText', selector: 'h1', text: 'Finally', timeoutMs: 3_000 },
            ],
          },
        ],
      },
    ],
  };
}

let db: Db;
let site: FixtureSite;
let api: ServiceProcess;
let limitedApi: ServiceProcess;
let worker: ServiceProcess;
let apiUrl: string;
let limitedApiUrl: string;
let tenant: Awaited<ReturnType<typeof createTenant>>;
let limitedTenant: Awaited<ReturnType<typeof createTenant>>;
/** A tenant of its own, so the API's access log shows only the long-polling test's requests. */
let pollTenant: Awaited<ReturnType<typeof createTenant>>;
let homeTestId: string;
const dir = mkdtempSync(path.join(tmpdir(), 'testrun-cli-'));
/** What afterAll undoes, in reverse order: only what beforeAll got to start. */
const cleanups: Array<() => Promise<unknown>> = [];

beforeAll(async () => {
  db = testDb();
  cleanups.push(() => db.$disconnect());
  site = await startFixtureSite();
  cleanups.push(() => site.close());
  tenant = await createTenant(db);
  limitedTenant = await createTenant(db);
  pollTenant = await createTenant(db);
  const applied = await applySampleProject(db, tenant.workspace.id, projectFile('shop', site.url));
  homeTestId = nth(nth(applied.suites, 0).tests, 0).id;
  const [pass, fail] = [nth(projectFile('x', site.url).suites, 0), nth(projectFile('x', site.url).suites, 1)];
  await applySampleProject(db, tenant.workspace.id, {
    slug: 'agg',
    name: 'Aggregate',
    baseUrl: site.url,
    suites: [
      { ...pass, tests: [nth(pass.tests, 0)] },
      { ...fail, slug: 'f', tests: [nth(fail.tests, 1)] },
    ],
  });
  await applySampleProject(db, limitedTenant.workspace.id, projectFile('shop', site.url));
  await applySampleProject(db, pollTenant.workspace.id, projectFile('shop', site.url));
  const [port, limitedPort] = [await freePort(), await freePort()];
  apiUrl = `http://127.0.0.1:${port}`;
  limitedApiUrl = `http://127.0.0.1:${limitedPort}`;
  api = startService('api', { PORT: String(port), PUBLIC_BASE_URL: apiUrl, LOG_LEVEL: 'info' });
  limitedApi = startService('api', {
    PORT: String(limitedPort),
    PUBLIC_BASE_URL: limitedApiUrl,
    LOG_LEVEL: 'info',
    RATE_LIMIT_PER_MINUTE: '5',
    // Windows of a few seconds: the rate-limit test sees a window end without waiting out a minute.
    RATE_LIMIT_WINDOW_MS: String(LIMITED_WINDOW_MS),
    // No long polls on this replica: the CLI falls back to polling at its interval, into the limit.
    LONG_POLL_MAX_WAITERS: '0',
  });
  worker = startService('worker', { WORKER_CONCURRENCY: '2', WORKER_VIDEO: 'off', LOG_LEVEL: 'warn' });
  cleanups.push(() => Promise.all([api.stop(), limitedApi.stop(), worker.stop()]));
  await Promise.all([waitReady(`${apiUrl}/readyz`, api), waitReady(`${limitedApiUrl}/readyz`, limitedApi)]);
});

afterAll(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

/** The `--json` document a command printed, checked against the CLI's report schema in contracts. */
const jsonOf = <T>(r: CliResult, validate: Validator<T>): T => parsed(validate, JSON.parse(r.stdout));

const env = () => ({ TESTRUN_API_URL: apiUrl, TESTRUN_API_KEY: tenant.key });
/** `testrun run` in this process (cli-harness.ts); the first test runs the binary instead. */
const cli = (args: string[], extra: Record<string, string> = {}) =>
  runCliHere(['run', '--poll-interval', '300ms', ...args], { ...env(), ...extra });
const all = (r: CliResult, ...files: string[]) =>
  [r.stdout, r.stderr, ...files.map((f) => readFileSync(f, 'utf8'))].join('\n');
const parseJunit = (file: string) =>
  new XMLParser({ ignoreAttributes: false, attributeNamePrefix: '', isArray: (name) => name === 'testcase' }).parse(
    readFileSync(file, 'utf8'),
  ) as {
    testsuites: {
      testsuite: {
        name: string;
        tests: string;
        failures: string;
        errors: string;
        skipped: string;
        testcase: Array<Record<string, unknown>>;
      };
    };
  };

async function suiteRunFromApi(id: string) {
  const res = await fetch(`${apiUrl}/api/v1/suite-runs/${id}`, { headers: { Authorization: `Bearer ${tenant.key}` } });
  expect(res.status).toBe(200);
  return parsed(wire.suiteRun, await res.json());
}

describe('testrun run: verdicts and exit codes', () => {
  it('passes a suite behind basic auth (exit 0), writes JUnit matching the counters, and never prints the header value', async () => {
    const junit = path.join(dir, 'pass.xml');
    // The documented form: the value comes from the environment, the command line only names it.
    // The published binary as a process of its own, as CI runs it; the other tests run it in this process.
    const r = await runCli(
      [
        'run',
        '--poll-interval',
        '300ms',
        '--project',
        'shop',
        '--suite',
        'pass',
        '--header-env',
        'Authorization=PREVIEW_AUTH',
        '--junit',
        junit,
        '--json',
      ],
      { ...env(), PREVIEW_AUTH: BASIC },
    );
    expect(r.code).toBe(0);
    const doc = jsonOf(r, wire.runReport);
    expect(doc).toMatchObject({ kind: 'suite', status: 'passed', exitCode: 0, counts: { total: 2, passed: 2 } });
    expect(r.stderr).toContain(`Suite run: ${doc.suiteRunUrl}`);
    expect(doc.suiteRunUrl).toMatch(new RegExp(`^${apiUrl}/view/suite-runs/srun_`));
    const counters = await suiteRunFromApi(doc.suiteRunId ?? 'missing');
    const suite = parseJunit(junit).testsuites.testsuite;
    expect(suite).toMatchObject({
      name: 'shop/pass',
      tests: String(counters.total_count),
      failures: String(counters.failed_count),
      errors: String(counters.error_count),
      skipped: String(counters.skipped_count),
    });
    expect(suite.testcase.map((t) => t.name).sort()).toEqual([
      'Home page home',
      'Protected preview (needs the basic-auth header)',
    ]);
    for (const secret of SECRET_PARTS) expect(all(r, junit)).not.toContain(secret);
    // The header did reach the target's origin.
    expect(site.received.some((q) => q.path === '/protected' && q.headers.authorization === BASIC)).toBe(true);
  });

  it('fails a suite with a failing test (exit 1); JUnit has the failure with its summary and link, and the skip', async () => {
    const junit = path.join(dir, 'fail.xml');
    const r = await cli(['--project', 'shop', '--suite', 'fail', '--junit', junit]);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(/The suite failed: 1 passed, 1 failed, 0 error, 1 skipped \(3\/3 finished\)/);
    // Plain CI log (not a TTY), as docs/CLI.md shows it: one line per finished test while waiting,
    // then each failed test with its result summary and view link, then the suite run's link.
    // Each with its duration as the service measured it (a skipped test never started: none).
    expect(r.stderr).toMatch(/ {2}FAILED {2}Heading says <Welcome> & "hello" \(\d[^)]*\)\n/);
    expect(r.stderr).toContain('  skipped Disabled test\n');
    expect(r.stderr).toMatch(/ {2}passed {2}Home page home \(\d[^)]*\)\n/);
    expect(r.stderr).toMatch(
      new RegExp(
        `\nFAILED Heading says <Welcome> & "hello": Failed at step 2 \\(expectText "h1"\\): .+\n {8}${apiUrl}/view/runs/run_`,
      ),
    );
    expect(r.stderr).toMatch(new RegExp(`\nDetails: ${apiUrl}/view/suite-runs/srun_`));
    const suite = parseJunit(junit).testsuites.testsuite;
    expect(suite).toMatchObject({ tests: '3', failures: '1', errors: '0', skipped: '1' });
    const failed = suite.testcase.find((t) => t.name === 'Heading says <Welcome> & "hello"') as
      { classname: string; failure: { message: string; '#text': string } } | undefined;
    if (!failed) throw new Error('JUnit has no test case for the failing test');
    expect(failed.classname).toBe('shop/fail');
    expect(failed.failure.message.length).toBeGreaterThan(0);
    expect(failed.failure['#text']).toMatch(new RegExp(`View: ${apiUrl}/view/runs/run_`));
    expect(suite.testcase.find((t) => t.name === 'Disabled test')).toHaveProperty('skipped');
  });

  it('exits 2 when a suite ends in error', async () => {
    const r = await cli(['--project', 'shop', '--suite', 'error', '--json']);
    expect(r.code).toBe(2);
    const doc = jsonOf(r, wire.runReport);
    expect(doc).toMatchObject({ status: 'error', exitCode: 2, counts: { error: 1 } });
    expect(nth(doc.tests, 0).error?.code).toBe('target_unreachable');
    expect(r.stderr).toContain('ended in error');
  });

  it('exits 2 when every test was skipped, and says so', async () => {
    const r = await cli(['--project', 'shop', '--suite', 'skipped']);
    expect(r.code).toBe(2);
    expect(r.stdout).toContain('was skipped entirely');
  });

  it('exits 2 with a clear message when the wait budget runs out', async () => {
    const junit = path.join(dir, 'timeout.xml');
    const r = await cli([
      '--project',
      'shop',
      '--suite',
      'slow',
      '--timeout',
      '1s',
      '--poll-interval',
      '200ms',
      '--junit',
      junit,
    ]);
    expect(r.code).toBe(2);
    expect(r.stdout).toMatch(/Wait budget of 1 s exceeded before the suite finished/);
    const suite = parseJunit(junit).testsuites.testsuite;
    expect(suite).toMatchObject({ tests: '1', errors: '1' });
    expect((suite.testcase[0] as { error: { type: string } }).error.type).toBe('timeout');
  });

  it('waits for every run of a project and reports them together by the suite rule', async () => {
    const junit = path.join(dir, 'project.xml');
    const r = await cli(['--project', 'agg', '--json', '--junit', junit]);
    expect(r.code).toBe(1);
    const doc = jsonOf(r, wire.runReport);
    expect(doc).toMatchObject({ kind: 'project', status: 'failed', counts: { total: 2, passed: 1, failed: 1 } });
    expect(doc.runIds).toHaveLength(2);
    expect(parseJunit(junit).testsuites.testsuite).toMatchObject({ name: 'agg', tests: '2', failures: '1' });
  });

  it('runs a single test by id (exit 0) and `testrun status` reads it back', async () => {
    const r = await cli([
      '--test',
      homeTestId,
      '--header',
      `Authorization: ${BASIC}`,
      '--json',
      '--trace',
      'on',
      '--screenshots',
      'off',
    ]);
    expect(r.code).toBe(0);
    const doc = jsonOf(r, wire.runReport);
    expect(doc).toMatchObject({ kind: 'test', status: 'passed', testId: homeTestId });
    const runId = nth(doc.runIds, 0);
    // The evidence flags reach the request; what they leave out keeps the default.
    const stored = await db.run.findUniqueOrThrow({ where: { id: runId }, select: { evidence: true } });
    expect(stored.evidence).toEqual({ trace: 'on', video: 'off', screenshots: 'off' });
    const s = await runCliHere(['status', runId, '--json'], env());
    expect(s.code).toBe(0);
    const status = jsonOf(s, wire.runStatusReport);
    expect(status).toMatchObject({ id: runId, status: 'passed', exitCode: 0 });
    expect(status.viewUrl).toContain('/view/runs/');
    for (const secret of SECRET_PARTS) expect(all(r) + all(s)).not.toContain(secret);
  });
});

describe('testrun run: retries', () => {
  it('--retries makes a test that fails once pass on a retry: flaky in the output, --json and JUnit (Surefire flakyFailure)', async () => {
    await applySampleProject(db, tenant.workspace.id, {
      slug: 'flaky',
      name: 'Flaky',
      baseUrl: site.url,
      suites: [
        {
          slug: 'once',
          name: 'Fails once',
          tests: [
            {
              key: 'flaky',
              name: 'Flaky page',
              steps: [
                { action: 'goto', url: `/flaky?key=cli-${tenant.workspace.id}&fails=1` },
                { action: 'expectText', selector: 'h1', text: 'Ready', timeoutMs: 500 },
              ],
            },
          ],
        },
      ],
    });
    const junit = path.join(dir, 'flaky.xml');
    const r = await cli(['--project', 'flaky', '--suite', 'once', '--retries', '1', '--junit', junit, '--json']);
    expect(r.code).toBe(0);
    const doc = jsonOf(r, wire.runReport);
    expect(doc.message).toBe('The suite passed: 1 passed (1 flaky), 0 failed, 0 error, 0 skipped (1/1 finished).');
    const [test] = doc.tests;
    expect(test).toMatchObject({ status: 'passed', flaky: true });
    expect(test?.previous_attempts.map((a) => [a.attempt, a.status])).toEqual([[1, 'failed']]);
    expect(r.stderr).toContain('Flaky page (flaky: passed on retry 1)');
    const testcase = nth(parseJunit(junit).testsuites.testsuite.testcase, 0);
    expect(testcase).toMatchObject({ name: 'Flaky page', flakyFailure: { type: 'failed' } });
    expect(testcase).not.toHaveProperty('failure');
  });
});

describe('testrun run: idempotency', () => {
  const suiteRuns = () => db.suiteRun.count({ where: { workspaceId: tenant.workspace.id } });

  it('enqueues once when repeated with the same --idempotency-key', async () => {
    const before = await suiteRuns();
    const args = [
      '--project',
      'shop',
      '--suite',
      'skipped',
      '--no-wait',
      '--json',
      '--idempotency-key',
      `cli-test-${tenant.tag}`,
    ];
    const first = await cli(args);
    const second = await cli(args);
    expect([first.code, second.code]).toEqual([0, 0]);
    const [a, b] = [jsonOf(first, wire.enqueuedReport), jsonOf(second, wire.enqueuedReport)];
    expect(b.suiteRunId).toBe(a.suiteRunId);
    expect([a.replayed, b.replayed]).toEqual([false, true]);
    expect(a.suiteRunUrl).toMatch(/\/view\/suite-runs\/srun_/);
    expect(await suiteRuns()).toBe(before + 1);
  });

  it('derives the key from the GitHub run: a repeated step replays, a new attempt enqueues again', async () => {
    const gh = {
      GITHUB_ACTIONS: 'true',
      CI: 'true',
      GITHUB_REPOSITORY: 'acme/shop',
      GITHUB_RUN_ID: `${Date.now()}`,
      GITHUB_RUN_ATTEMPT: '1',
      GITHUB_JOB: 'e2e',
      GITHUB_ACTION: '__run',
    };
    const args = ['--project', 'shop', '--suite', 'skipped', '--no-wait', '--json'];
    const before = await suiteRuns();
    const a = jsonOf(await cli(args, gh), wire.enqueuedReport);
    const b = jsonOf(await cli(args, gh), wire.enqueuedReport);
    const c = jsonOf(await cli(args, { ...gh, GITHUB_RUN_ATTEMPT: '2' }), wire.enqueuedReport);
    expect(b.suiteRunId).toBe(a.suiteRunId);
    expect(c.suiteRunId).not.toBe(a.suiteRunId);
    expect(await suiteRuns()).toBe(before + 2);
  });
});

describe('testrun run: errors', () => {
  it('gives a usage error naming the flag, exit 2, without contacting the API', async () => {
    const cases: Array<[string[], RegExp]> = [
      [['--project', 'shop', '--timeout', 'soon'], /--timeout/],
      [['--project', 'shop', '--poll-interval', '3 seconds'], /--poll-interval/],
      [['--project', 'shop', '--bogus'], /unknown option '--bogus'/],
      [['--suite', 'pass'], /--suite needs --project/],
      [['--test', 'tst_x', '--project', 'shop'], /either --test or --project/],
      [['--project', 'shop', '--header', 'no colon here'], /--header #1/],
      [['--project', 'shop', '--base-url', 'ftp://x'], /--base-url/],
      [['--project', 'shop', '--trace', 'sometimes'], /--trace/],
    ];
    for (const [args, message] of cases) {
      const r = await cli(args);
      expect({ args, code: r.code }).toEqual({ args, code: 2 });
      expect(r.stderr).toMatch(message);
      expect(r.stdout).toBe('');
    }
    const missing = await runCliHere(['run', '--project', 'shop'], {});
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/TESTRUN_API_URL/);
  });

  it('reports an API refusal with its code (exit 2) and never the header value', async () => {
    const value = 'very-secret-host-value-123';
    const r = await cli([
      '--project',
      'shop',
      '--suite',
      'pass',
      '--header',
      `Host: ${value}`,
      '--header',
      `Authorization: ${BASIC}`,
      '--json',
    ]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/API error 400 invalid_body/);
    expect(jsonOf(r, wire.failureReport)).toMatchObject({
      status: 'error',
      error: { status: 400, code: 'invalid_body' },
    });
    for (const secret of [value, ...SECRET_PARTS]) expect(all(r)).not.toContain(secret);
  });

  it('reports an unknown project as 404 not_found (exit 2)', async () => {
    const r = await cli(['--project', 'no-such-project']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/API error 404 not_found/);
  });
});

describe('testrun run: long polling', () => {
  it('waits for a slow suite in a handful of requests, however short the poll interval', async () => {
    const junit = path.join(dir, 'long-poll.xml');
    const r = await runCliHere(
      ['run', '--project', 'shop', '--suite', 'slowpass', '--poll-interval', '200ms', '--json', '--junit', junit],
      { TESTRUN_API_URL: apiUrl, TESTRUN_API_KEY: pollTenant.key },
    );
    expect(r.code).toBe(0);
    const report = jsonOf(r, wire.runReport);
    expect(report).toMatchObject({ status: 'passed', counts: { passed: 1 } });
    // The test's time is the one the worker measured, not when the client happened to look.
    const { durationMs } = await db.run.findUniqueOrThrow({ where: { id: nth(report.tests, 0).runId } });
    expect(nth(report.tests, 0).durationMs).toBe(durationMs);
    expect(readFileSync(junit, 'utf8')).toContain(`time="${((durationMs ?? Number.NaN) / 1000).toFixed(3)}"`);
    const gets = accessLog(api.output(), pollTenant.keyId).filter((l) => l.method === 'GET');
    // The suite moves queued → running → passed: each GET was held until a change. Polling every
    // 200 ms through a 3 s page would have taken about 15.
    expect(gets.length).toBeGreaterThanOrEqual(1);
    expect(gets.length).toBeLessThanOrEqual(4);
  });
});

describe('testrun run: rate limit', () => {
  it('rides out 429s by honouring Retry-After and still reaches the verdict without hammering the API', async () => {
    const r = await runCliHere(
      ['run', '--project', 'shop', '--suite', 'slowpass', '--poll-interval', '200ms', '--json'],
      { TESTRUN_API_URL: limitedApiUrl, TESTRUN_API_KEY: limitedTenant.key },
    );
    expect(r.code).toBe(0);
    expect(jsonOf(r, wire.runReport)).toMatchObject({ status: 'passed', counts: { passed: 1 } });
    expect(r.stderr).toMatch(/HTTP 429 on GET \/api\/v1\/suite-runs\/srun_\w+; retrying in/);
    const statuses = accessLog(limitedApi.output(), limitedTenant.keyId).map((l) => l.status);
    const limited = statuses.filter((status) => status === 429);
    const served = statuses.filter((status) => status !== 429);
    // It was rate limited, then waited out the window: one 429 per exhausted window, not a stream.
    // The window is LIMITED_WINDOW_MS, so how many windows the wait spans depends on how long the
    // suite takes; whatever their number, the request after a 429 is served (it came after
    // Retry-After, in the next window) and no window serves more than its 5 requests.
    expect(limited.length).toBeGreaterThanOrEqual(1);
    statuses.forEach((status, i) => {
      if (status === 429) expect({ i, next: statuses[i + 1] ?? 'none' }).not.toEqual({ i, next: 429 });
    });
    expect(served.length).toBeLessThanOrEqual(5 * (limited.length + 1));
  });
});
