import { deriveCiIdempotencyKey } from './ci-idempotency';
import { buildJunitXml, esc } from './junit';
import {
  parseDuration,
  parseHeaders,
  parseRetries,
  parseWorkers,
  redact,
  secretsOf,
  UsageError,
} from './parse-options';
import type { ReportTest, RunReport } from '@testrun/contracts';
import { exitCodeFor } from './report';
import { openCommand } from './connection';
import { Output } from './output';

describe('parseRetries', () => {
  it('takes a whole number from 0 to 3 and names the flag otherwise', () => {
    expect([parseRetries('0', '--retries'), parseRetries(' 3 ', '--retries')]).toEqual([0, 3]);
    for (const bad of ['4', '-1', '1.5', 'two', ''])
      expect(() => parseRetries(bad, '--retries')).toThrow(/^--retries must be a whole number from 0 to 3/);
  });
});

describe('parseWorkers', () => {
  it('takes a whole number from 1 to 64 and names the flag otherwise', () => {
    expect([parseWorkers('1', '--workers'), parseWorkers(' 64 ', '--workers')]).toEqual([1, 64]);
    for (const bad of ['0', '65', '-1', '1.5', 'two', ''])
      expect(() => parseWorkers(bad, '--workers')).toThrow(/^--workers must be a whole number from 1 to 64/);
  });
});

describe('parseDuration', () => {
  it('reads units, combinations and bare milliseconds', () => {
    expect(parseDuration('15m', '--timeout')).toBe(900_000);
    expect(parseDuration('90s', '--timeout')).toBe(90_000);
    expect(parseDuration('1h', '--timeout')).toBe(3_600_000);
    expect(parseDuration('1m30s', '--timeout')).toBe(90_000);
    expect(parseDuration('250ms', '--timeout')).toBe(250);
    expect(parseDuration('1500', '--timeout')).toBe(1_500);
  });
  it('names the flag when the value is not a duration', () => {
    expect(() => parseDuration('soon', '--poll-interval')).toThrow(/--poll-interval/);
    expect(() => parseDuration('5q', '--timeout')).toThrow(UsageError);
  });
});

describe('parseHeaders', () => {
  it('splits at the first colon and trims', () => {
    expect(parseHeaders(['Authorization: Basic a:b', 'X-Bypass:tok'])).toEqual({
      Authorization: 'Basic a:b',
      'X-Bypass': 'tok',
    });
  });
  it('refuses malformed or repeated headers without echoing the value', () => {
    for (const bad of [['no-colon-s3cret'], ['Bad Name: s3cret'], ['A: s3cret', 'a: s3cret'], ['A: s3cret\u2603']]) {
      expect(() => parseHeaders(bad)).toThrow(/--header #\d/);
      expect(() => parseHeaders(bad)).not.toThrow(/s3cret/);
    }
  });
  it('redacts whole values and the credentials part of scheme values', () => {
    const secrets = secretsOf(['Basic ZGVtbzpwcmV2aWV3']);
    expect(redact('got Basic ZGVtbzpwcmV2aWV3 and ZGVtbzpwcmV2aWV3', secrets)).toBe('got *** and ***');
  });
});

describe('deriveCiIdempotencyKey', () => {
  const gh = {
    GITHUB_ACTIONS: 'true',
    GITHUB_REPOSITORY: 'acme/shop',
    GITHUB_RUN_ID: '42',
    GITHUB_RUN_ATTEMPT: '1',
    GITHUB_JOB: 'e2e',
    GITHUB_ACTION: '__run',
  };
  const req = { projectSlug: 'shop', suiteSlug: 'smoke', headers: { Authorization: 'Basic c2VjcmV0' } };
  it('is stable within one attempt and changes with the attempt, the step and the request', () => {
    const k = deriveCiIdempotencyKey(gh, req);
    expect(k).toMatch(/^testrun:gh:acme\/shop:42:1:e2e:__run::[0-9a-f]{16}$/);
    expect(deriveCiIdempotencyKey({ ...gh }, { ...req })).toBe(k);
    expect(deriveCiIdempotencyKey({ ...gh, GITHUB_RUN_ATTEMPT: '2' }, req)).not.toBe(k);
    expect(deriveCiIdempotencyKey({ ...gh, GITHUB_ACTION: '__run_2' }, req)).not.toBe(k);
    expect(deriveCiIdempotencyKey(gh, { ...req, suiteSlug: 'full' })).not.toBe(k);
  });
  it('does not depend on header values (they are secrets)', () => {
    expect(deriveCiIdempotencyKey(gh, { ...req, headers: { Authorization: 'Basic other' } })).toBe(
      deriveCiIdempotencyKey(gh, req),
    );
  });
  it('knows GitLab and is null outside CI', () => {
    expect(
      deriveCiIdempotencyKey({ GITLAB_CI: 'true', CI_PROJECT_ID: '7', CI_PIPELINE_ID: '8', CI_JOB_ID: '9' }, req),
    ).toMatch(/^testrun:gl:7:8:9:/);
    expect(deriveCiIdempotencyKey({}, req)).toBeNull();
  });
});

const reportTest = (runId: string, status: ReportTest['status'], extra: Partial<ReportTest> = {}): ReportTest => ({
  runId,
  name: `test <${runId}>`,
  status,
  result_summary: `${status} summary`,
  error: null,
  skip_reason: null,
  flaky: false,
  attempts: 1,
  previous_attempts: [],
  viewUrl: null,
  durationMs: 1500,
  ...extra,
});

const suiteReport = (tests: ReportTest[]): RunReport => ({
  kind: 'suite',
  project: 'shop',
  suite: 'smoke',
  testId: null,
  suiteRunId: 'srun_1',
  runIds: [],
  suiteRunUrl: 'http://t/view/suite-runs/srun_1/x?a=1&b=2',
  status: 'failed',
  counts: { total: 4, queued: 0, running: 0, passed: 1, failed: 1, error: 1, skipped: 1 },
  timedOut: false,
  durationMs: 4000,
  exitCode: 1,
  message: '',
  idempotencyKey: 'k-1',
  replayed: false,
  tests,
});

describe('JUnit', () => {
  it('escapes XML and drops characters XML cannot carry', () => {
    expect(esc(`a<b>&"c"'\u0001`)).toBe('a&lt;b&gt;&amp;&quot;c&quot;&apos;\uFFFD');
  });
  it('maps statuses to failure, error and skipped elements', () => {
    const t = reportTest;
    const report = suiteReport([
      t('run_a', 'passed'),
      t('run_b', 'failed'),
      t('run_c', 'error', { error: { code: 'timeout', message: 'm', step: 2 } }),
      t('run_d', 'skipped', { skip_reason: 'test_disabled' }),
    ]);
    const xml = buildJunitXml(report, new Date('2026-01-01T00:00:00Z'));
    expect(xml).toContain('<testsuite name="shop/smoke" tests="4" failures="1" errors="1" skipped="1" time="4.000"');
    expect(xml).toContain('<testcase name="test &lt;run_b&gt;" classname="shop/smoke" time="1.500">');
    expect(xml).toContain('<failure message="failed summary" type="failed">');
    expect(xml).toContain('<error message="error summary" type="timeout">error summary\nm\nStep: 2');
    expect(xml).toContain('<skipped message="test_disabled"/>');
    expect(xml).toContain('View: http://t/view/suite-runs/srun_1/x?a=1&amp;b=2');
  });
  it('writes earlier attempts as Surefire does: flakyFailure on a flaky pass, rerunFailure/rerunError otherwise', () => {
    const attempt = (n: number, status: 'failed' | 'error') => ({
      attempt: n,
      status,
      result_summary: `attempt ${n} ${status}`,
      error: status === 'error' ? { code: 'timeout' as const, message: 'm', step: 1 } : null,
      started_at: '2026-01-01T00:00:00.000Z',
      finished_at: '2026-01-01T00:00:01.000Z',
      duration_ms: 1000,
    });
    const xml = buildJunitXml(
      suiteReport([
        reportTest('run_a', 'passed', { flaky: true, attempts: 2, previous_attempts: [attempt(1, 'failed')] }),
        reportTest('run_b', 'failed', { previous_attempts: [attempt(1, 'failed'), attempt(2, 'error')] }),
      ]),
    );
    expect(xml).toContain(
      '<flakyFailure message="attempt 1 failed" type="failed"><stackTrace>Attempt 1: attempt 1 failed</stackTrace></flakyFailure>',
    );
    expect(xml).toContain('<failure message="failed summary" type="failed">');
    expect(xml).toContain('<rerunFailure message="attempt 1 failed" type="failed">');
    expect(xml).toContain(
      '<rerunError message="attempt 2 error" type="timeout"><stackTrace>Attempt 2: attempt 2 error\nStep: 1</stackTrace></rerunError>',
    );
    // A flaky test is a passed test: no failure element of its own.
    const flakyCase = xml.slice(xml.indexOf('run_a'), xml.indexOf('run_b'));
    expect(flakyCase).not.toMatch(/<failure|<error/);
    // JUnit has no flaky outcome: viewers that skip Surefire's elements still read it in words.
    expect(flakyCase).toContain(
      '<system-out>Flaky: passed on retry 1 (attempt 1 failed: attempt 1 failed)\nView: http://t/view/suite-runs/srun_1/x?a=1&amp;b=2</system-out>',
    );
    expect(xml).toContain('<property name="flaky" value="1"/>');
  });
  it("orders earlier attempts as Surefire's schema orders a test case's children", () => {
    const attempt = (n: number, status: 'failed' | 'error') => ({
      attempt: n,
      status,
      result_summary: `attempt ${n} ${status}`,
      error: status === 'error' ? { code: 'timeout' as const, message: 'm', step: 1 } : null,
      started_at: '2026-01-01T00:00:00.000Z',
      finished_at: '2026-01-01T00:00:01.000Z',
      duration_ms: 1000,
    });
    const earlier = [attempt(1, 'error'), attempt(2, 'failed')];
    const xml = buildJunitXml(
      suiteReport([
        reportTest('run_a', 'passed', { flaky: true, attempts: 3, previous_attempts: earlier }),
        reportTest('run_b', 'error', { previous_attempts: earlier }),
      ]),
    );
    const elements = (runId: string) => {
      const at = xml.indexOf(`name="test &lt;${runId}&gt;"`);
      const testcase = xml.slice(at, xml.indexOf('</testcase>', at));
      return [...testcase.matchAll(/<([\w-]+)[ >]/g)].map((m) => m[1]);
    };
    expect(elements('run_a')).toEqual(['flakyFailure', 'stackTrace', 'flakyError', 'stackTrace', 'system-out']);
    expect(elements('run_b')).toEqual(['rerunFailure', 'stackTrace', 'error', 'rerunError', 'stackTrace']);
  });
  it('exit codes: 0 passed, 1 failed, 2 error, skipped or timed out', () => {
    expect([
      exitCodeFor('passed', false),
      exitCodeFor('failed', false),
      exitCodeFor('error', false),
      exitCodeFor('skipped', false),
      exitCodeFor('passed', true),
    ]).toEqual([0, 1, 2, 2, 2]);
  });
});

describe('openCommand', () => {
  it('refuses a bad API URL naming the option, never quoting the URL (it may hold credentials)', () => {
    const ctx = { env: {}, streams: { stdout: process.stdout, stderr: process.stderr } };
    const open = () =>
      openCommand({ apiUrl: 'ftp://ci:hunter2-secret@example.test', apiKey: 'k' }, ctx, { json: false });
    expect(open).toThrow(UsageError);
    expect(open).toThrow(/^--api-url \/ TESTRUN_API_URL must be an absolute http\(s\) URL$/);
    expect(open).not.toThrow(/hunter2/);
    expect(() => openCommand({ apiUrl: 'http://127.0.0.1:1' }, ctx, { json: false })).toThrow(
      'no API key: pass --api-key or set TESTRUN_API_KEY',
    );
  });
});

describe('Output while the runs wait in the queue', () => {
  it('says "queued: waiting for a worker" in a CI log, then again every 30 s while it lasts', () => {
    let written = '';
    const sink = { write: (text: string) => ((written += text), true) } as unknown as NodeJS.WritableStream;
    let now = 0;
    const out = new Output({ stdout: sink, stderr: sink }, [], false, () => now);
    const counts = { total: 2, queued: 2, running: 0, passed: 0, failed: 0, error: 0, skipped: 0 };
    for (const at of [500, 12_000, 31_000, 45_000]) {
      now = at;
      out.progress([], counts, 'queued', 0);
    }
    now = 50_000;
    out.progress([], { ...counts, queued: 1, running: 1 }, 'running', 0);
    expect(written).toBe('queued: waiting for a worker (500 ms)\nqueued: waiting for a worker (31 s)\n');
  });

  it("says why, from the service's queue_wait, and once the runs start how long they waited", () => {
    let written = '';
    const sink = { write: (text: string) => ((written += text), true) } as unknown as NodeJS.WritableStream;
    let now = 0;
    const out = new Output({ stdout: sink, stderr: sink }, [], false, () => now);
    const counts = { total: 2, queued: 2, running: 0, passed: 0, failed: 0, error: 0, skipped: 0 };
    const behind = { runs_ahead: 12, reason: 'workspace_runs_ahead' } as const;
    now = 2_000;
    out.progress([], counts, 'queued', 0, { waited_ms: null, ...behind });
    now = 301_000;
    out.progress([], { ...counts, queued: 1, running: 1 }, 'running', 0, { waited_ms: 301_000, ...behind });
    out.progress([], { ...counts, queued: 1, running: 1 }, 'running', 0, { waited_ms: 301_000, ...behind });
    expect(written).toBe(
      'queued: waiting for a worker (2 s; behind 12 runs of its workspace enqueued before it)\n' +
        'started after 5 min 01 s in the queue: behind 12 runs of its workspace enqueued before it\n',
    );

    // First of its workspace in line, it waited for a worker slot; a wait under a second is not worth a line.
    written = '';
    const first = new Output({ stdout: sink, stderr: sink }, [], false, () => now);
    first.progress([], counts, 'queued', 0, { waited_ms: null, runs_ahead: 0, reason: 'waiting_for_worker' });
    expect(written).toContain(
      '(5 min 01 s; first of its workspace in line: every worker slot busy or no worker running)',
    );
    written = '';
    const quick = new Output({ stdout: sink, stderr: sink }, [], false, () => now);
    quick.progress([], counts, 'running', 0, { waited_ms: 40, runs_ahead: 0, reason: 'waiting_for_worker' });
    expect(written).toBe('');
  });
});
