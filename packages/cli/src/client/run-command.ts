import { writeFileSync } from 'node:fs';
import {
  countStatuses,
  formatMs,
  isTransientError,
  TestrunApiError,
  TestrunClient,
  TestrunNetworkError,
  TestrunWaitTimeoutError,
  type StatusCounts,
} from '@testrun/client';
import type { Run, RunCreateRequest, SuiteRun } from '@testrun/contracts';
import { deriveCiIdempotencyKey } from './ci-idempotency';
import { buildJunitXml } from './junit';
import { Output, type OutputStreams } from './output';
import { parseDuration, parseHeaders, secretsOf, UsageError } from './parse-options';
import {
  DurationTracker,
  EXIT,
  exitCodeFor,
  summarize,
  testsFromRuns,
  testsFromSuiteRun,
  verdictLine,
  type Report,
  type ReportTest,
} from './report';

/** Flags of `testrun run`, as commander gives them. */
export interface RunFlags {
  test?: string;
  project?: string;
  suite?: string;
  baseUrl?: string;
  header: string[];
  idempotencyKey?: string;
  timeout: string;
  pollInterval: string;
  junit?: string;
  json?: boolean;
  wait: boolean;
  apiUrl?: string;
  apiKey?: string;
}

/** Flags shared by every command that talks to the API. */
export interface ConnectionFlags {
  apiUrl?: string;
  apiKey?: string;
}

/** Environment and streams of one invocation, injectable so the command can be driven in-process. */
export interface CommandContext {
  env: NodeJS.ProcessEnv;
  streams: OutputStreams;
  now?: () => number;
}

/** API URL and key: flags override `TESTRUN_API_URL` / `TESTRUN_API_KEY`. */
export function resolveConnection(flags: ConnectionFlags, env: NodeJS.ProcessEnv): { apiUrl: string; apiKey: string } {
  const apiUrl = flags.apiUrl || env.TESTRUN_API_URL;
  const apiKey = flags.apiKey || env.TESTRUN_API_KEY;
  if (!apiUrl) throw new UsageError('no API URL: pass --api-url or set TESTRUN_API_URL');
  if (!apiKey) throw new UsageError('no API key: pass --api-key or set TESTRUN_API_KEY');
  try {
    const u = new URL(apiUrl);
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new Error('not http(s)');
  } catch {
    throw new UsageError(`--api-url / TESTRUN_API_URL must be an absolute http(s) URL (got "${apiUrl}")`);
  }
  return { apiUrl, apiKey };
}

/** Checks the flags of `testrun run` and builds the request; every problem names its flag. */
export function parseRunFlags(flags: RunFlags) {
  if (flags.test !== undefined && flags.project !== undefined)
    throw new UsageError('give either --test or --project, not both');
  if (flags.suite !== undefined && flags.project === undefined) throw new UsageError('--suite needs --project');
  if (flags.test === undefined && flags.project === undefined)
    throw new UsageError('one of --test ID or --project SLUG is required');
  for (const [flag, v] of [
    ['--test', flags.test],
    ['--project', flags.project],
    ['--suite', flags.suite],
  ] as const) {
    if (v !== undefined && v.trim() === '') throw new UsageError(`${flag} must not be empty`);
  }
  const timeoutMs = parseDuration(flags.timeout, '--timeout');
  if (timeoutMs <= 0) throw new UsageError('--timeout must be greater than zero');
  const pollIntervalMs = parseDuration(flags.pollInterval, '--poll-interval');
  if (pollIntervalMs < 100) throw new UsageError('--poll-interval must be at least 100ms');
  if (flags.baseUrl !== undefined) {
    let ok = false;
    try {
      const u = new URL(flags.baseUrl);
      ok = u.protocol === 'http:' || u.protocol === 'https:';
    } catch {
      ok = false;
    }
    if (!ok) throw new UsageError(`--base-url must be an absolute http(s) URL (got "${flags.baseUrl}")`);
  }
  if (flags.idempotencyKey !== undefined && !/^[\x21-\x7e]{1,255}$/.test(flags.idempotencyKey)) {
    throw new UsageError('--idempotency-key must be 1 to 255 visible ASCII characters');
  }
  const headers = parseHeaders(flags.header);
  const request: RunCreateRequest = flags.test !== undefined ? { testId: flags.test } : { projectSlug: flags.project! };
  if (flags.suite !== undefined) request.suiteSlug = flags.suite;
  if (flags.baseUrl !== undefined) request.baseUrl = flags.baseUrl;
  if (Object.keys(headers).length > 0) request.headers = headers;
  return { request, headers, timeoutMs, pollIntervalMs };
}

/** `testrun run`: enqueue, wait, report. Resolves to the exit code. Throws only {@link UsageError}. */
export async function runRunCommand(flags: RunFlags, ctx: CommandContext): Promise<number> {
  const { request, headers, timeoutMs, pollIntervalMs } = parseRunFlags(flags);
  const connection = resolveConnection(flags, ctx.env);
  const now = ctx.now ?? Date.now;
  const out = new Output(
    ctx.streams,
    secretsOf([...Object.values(headers), connection.apiKey]),
    Boolean(flags.json),
    now,
  );
  const client = new TestrunClient({
    ...connection,
    userAgent: 'testrun-cli',
    now,
    onRetry: (r) =>
      out.info(
        `${r.status === null ? 'No answer' : `HTTP ${r.status}`} on ${r.method} ${r.path}; retrying in ${formatMs(r.delayMs)}`,
      ),
  });
  const idempotencyKey =
    flags.idempotencyKey ?? ctx.env.TESTRUN_IDEMPOTENCY_KEY ?? deriveCiIdempotencyKey(ctx.env, request) ?? undefined;

  try {
    const enqueued = await client.enqueue(request, { idempotencyKey });
    const body = enqueued.body as { runId?: string; suiteRunId?: string; runIds?: string[] };
    const replayed = enqueued.replayed ? ' (replayed: this key was already used, nothing new was enqueued)' : '';
    const kind: Report['kind'] = body.suiteRunId ? 'suite' : body.runIds ? 'project' : 'test';
    const runIds = body.runIds ?? (body.runId ? [body.runId] : []);
    if (kind === 'suite')
      out.info(`Enqueued suite run ${body.suiteRunId} (${request.projectSlug}/${request.suiteSlug})${replayed}`);
    else if (kind === 'project')
      out.info(`Enqueued ${runIds.length} runs of project ${request.projectSlug}${replayed}`);
    else out.info(`Enqueued run ${body.runId} of test ${request.testId}${replayed}`);

    const base = {
      kind,
      project: request.projectSlug ?? null,
      suite: request.suiteSlug ?? null,
      testId: request.testId ?? null,
      suiteRunId: body.suiteRunId ?? null,
      runIds,
      idempotencyKey: enqueued.idempotencyKey,
      replayed: enqueued.replayed,
    };

    if (!flags.wait) {
      let suiteRunUrl: string | null = null;
      if (body.suiteRunId) {
        suiteRunUrl = (await client.getSuiteRun(body.suiteRunId)).suiteRunUrl;
        out.info(`Suite run: ${suiteRunUrl}`);
      }
      if (flags.json)
        out.result(JSON.stringify({ ...base, suiteRunUrl, status: 'queued', exitCode: EXIT.passed }, null, 2));
      else out.result(body.suiteRunId ?? runIds.join('\n'));
      return EXIT.passed;
    }

    const started = now();
    const durations = new DurationTracker(now);
    let tests: ReportTest[] = [];
    let counts: StatusCounts = countStatuses([]);
    let status: Report['status'] = 'queued';
    let suiteRunUrl: string | null = null;
    let timedOut = false;
    try {
      if (body.suiteRunId) {
        const onProgress = (s: SuiteRun) => {
          if (suiteRunUrl === null) out.info(`Suite run: ${s.suiteRunUrl}`);
          suiteRunUrl = s.suiteRunUrl;
          for (const t of s.tests) durations.observe(t.runId, t.status);
          tests = testsFromSuiteRun(s, durations);
          counts = suiteCounts(s, tests);
          status = s.status;
          out.progress(tests, counts, status, started);
        };
        await client.waitForSuiteRun(body.suiteRunId, { timeoutMs, pollIntervalMs, onProgress });
      } else {
        const name = (r: Run) => (kind === 'test' ? request.testId! : r.id);
        const onProgress = (runs: Run[]) => {
          for (const r of runs) durations.observe(r.id, r.status);
          tests = testsFromRuns(runs, name, durations);
          ({ counts, status } = summarize(tests));
          out.progress(tests, counts, status, started);
        };
        if (kind === 'test')
          await client.waitForRun(runIds[0]!, { timeoutMs, pollIntervalMs, onProgress: (r) => onProgress([r]) });
        else await client.waitForRuns(runIds, { timeoutMs, pollIntervalMs, onProgress });
      }
    } catch (e) {
      if (!(e instanceof TestrunWaitTimeoutError)) throw e;
      timedOut = true;
      if (tests.length === 0) {
        tests = runIds.map((runId) => ({
          runId,
          name: kind === 'test' ? request.testId! : runId,
          status: 'queued',
          result_summary: null,
          error: null,
          skip_reason: null,
          viewUrl: null,
          durationMs: null,
        }));
        if (kind !== 'suite') ({ counts, status } = summarize(tests));
      }
    }
    out.done();
    await addDetails(client, tests);

    const durationMs = now() - started;
    const exitCode = exitCodeFor(status, timedOut);
    const report: Report & { idempotencyKey: string; replayed: boolean } = {
      ...base,
      suiteRunUrl,
      status,
      counts,
      tests,
      timedOut,
      durationMs,
      exitCode,
      message: verdictLine({ kind, status, counts, timedOut }, formatMs(timeoutMs)),
    };
    if (flags.junit) writeFileSync(flags.junit, out.redactText(buildJunitXml(report)));
    for (const t of tests.filter((x) => x.status === 'failed' || x.status === 'error')) {
      out.info(
        `${t.status === 'failed' ? 'FAILED' : 'ERROR '} ${t.name}: ${t.result_summary ?? t.status}${t.viewUrl ? `\n        ${t.viewUrl}` : ''}`,
      );
    }
    if (suiteRunUrl) out.info(`Details: ${suiteRunUrl}`);
    out.summary(report.message);
    if (flags.json) out.result(JSON.stringify(report, null, 2));
    return exitCode;
  } catch (e) {
    out.done();
    return reportFailure(e, out, Boolean(flags.json));
  }
}

/** Adds result summaries, error details and view links of the tests that did not pass (one GET each). */
async function addDetails(client: TestrunClient, tests: ReportTest[]): Promise<void> {
  for (const t of tests) {
    if (t.status !== 'failed' && t.status !== 'error') continue;
    try {
      const { run, viewUrl } = await client.getRunWithLink(t.runId);
      t.result_summary = run.result_summary;
      t.error = run.error;
      t.viewUrl = viewUrl;
    } catch (e) {
      // The verdict is known already; details are a courtesy the API may be too busy to give.
      if (!isTransientError(e)) throw e;
    }
  }
}

function suiteCounts(s: SuiteRun, tests: readonly ReportTest[]): StatusCounts {
  const live = countStatuses(tests.map((t) => t.status));
  return {
    total: s.total_count,
    queued: live.queued,
    running: live.running,
    passed: s.passed_count,
    failed: s.failed_count,
    error: s.error_count,
    skipped: s.skipped_count,
  };
}

/** Prints an API or network failure (never a header value) and gives exit code 2. */
export function reportFailure(e: unknown, out: Output, json: boolean): number {
  let message: string;
  let error: Record<string, unknown>;
  if (e instanceof TestrunApiError) {
    const fields = e.errors.map((f) => `${f.path || 'body'} ${f.message}`).join('; ');
    message = `API error ${e.status} ${e.code}: ${e.detail}${fields && !e.detail.includes(fields) ? ` (${fields})` : ''}`;
    error = { kind: 'api', status: e.status, code: e.code, detail: e.detail, errors: e.errors };
  } else if (e instanceof TestrunNetworkError) {
    message = `cannot reach the API: ${e.message}`;
    error = { kind: 'network', detail: e.message };
  } else {
    throw e;
  }
  out.info(`testrun: ${message}`);
  if (json) out.result(JSON.stringify({ status: 'error', exitCode: EXIT.error, message, error }, null, 2));
  return EXIT.error;
}
