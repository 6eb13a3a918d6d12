// Over 300 lines: `testrun run`'s flags, their checks, the enqueue, the wait and the report for
// three modes (suite, project, test) that share each step; split by step when a mode is added.
import { writeFileSync } from 'node:fs';
import { countStatuses, TestrunWaitTimeoutError } from '@testrun/client';
import {
  checkBaseUrl,
  formatDuration,
  IDEMPOTENCY_KEY_RULE,
  isIdempotencyKey,
  type EnqueuedReport,
  type EvidenceMode,
  type ReportCounts,
  type ReportTest,
  type Run,
  type RunCreateRequest,
  type RunCreateResponse,
  type RunReport,
  type SuiteRun,
  type SuiteRunStatus,
} from '@testrun/contracts';
import { deriveCiIdempotencyKey } from './ci-idempotency';
import { isReportable, openCommand, reportFailure, type CommandContext, type ConnectionFlags } from './connection';
import { buildJunitXml } from './junit';
import type { Output } from './output';
import { parseDuration, parseRetries, UsageError } from './parse-options';
import {
  addDetails,
  bareTest,
  closingLines,
  EXIT,
  exitCodeFor,
  suiteCounts,
  summarize,
  testsFromRuns,
  testsFromSuiteRun,
  verdictLine,
} from './report';
import { readSecretInputs, type SecretInputFlags } from './secret-inputs';

/** Flags of `testrun run`, as commander gives them. */
export interface RunFlags extends ConnectionFlags, SecretInputFlags {
  test?: string;
  project?: string;
  suite?: string;
  baseUrl?: string;
  /** Evidence for this request only (overrides the test's and the project's settings). */
  trace?: EvidenceMode;
  video?: EvidenceMode;
  screenshots?: EvidenceMode;
  /** Retries of each run after a failed or error attempt (overrides the tests'). */
  retries?: string;
  idempotencyKey?: string;
  timeout: string;
  pollInterval: string;
  junit?: string;
  json?: boolean;
  wait: boolean;
  /** False with `--no-cancel-on-exit`: on SIGINT/SIGTERM, leave what was enqueued running. */
  cancelOnExit: boolean;
}

/** The flags of `testrun run` that say how to wait and report; `testrun rerun` shares them. */
export type FollowFlags = Pick<RunFlags, 'junit' | 'json' | 'wait' | 'cancelOnExit'>;

/** What one invocation enqueues, read from the flags. */
type Target = { kind: 'test'; testId: string } | { kind: 'suite' | 'project'; project: string; suite: string | null };

function targetOf(flags: RunFlags): Target {
  if (flags.test !== undefined && flags.project !== undefined)
    throw new UsageError('give either --test or --project, not both');
  if (flags.suite !== undefined && flags.project === undefined) throw new UsageError('--suite needs --project');
  for (const [flag, v] of [
    ['--test', flags.test],
    ['--project', flags.project],
    ['--suite', flags.suite],
  ] as const) {
    if (v !== undefined && v.trim() === '') throw new UsageError(`${flag} must not be empty`);
  }
  if (flags.test !== undefined) return { kind: 'test', testId: flags.test };
  if (flags.project === undefined) throw new UsageError('one of --test ID or --project SLUG is required');
  return { kind: flags.suite === undefined ? 'project' : 'suite', project: flags.project, suite: flags.suite ?? null };
}

/** Checks the flags of `testrun run` and builds the request; every problem names its flag. */
function parseRunFlags(flags: RunFlags, env: NodeJS.ProcessEnv) {
  const target = targetOf(flags);
  const timeoutMs = parseDuration(flags.timeout, '--timeout');
  if (timeoutMs <= 0) throw new UsageError('--timeout must be greater than zero');
  const pollIntervalMs = parseDuration(flags.pollInterval, '--poll-interval');
  if (pollIntervalMs < 100) throw new UsageError('--poll-interval must be at least 100ms');
  if (flags.baseUrl !== undefined) {
    const problem = checkBaseUrl(flags.baseUrl);
    // Not quoted: a preview URL may carry credentials (https://user:password@host).
    if (problem) throw new UsageError(`--base-url ${problem}`);
  }
  if (flags.idempotencyKey !== undefined && !isIdempotencyKey(flags.idempotencyKey)) {
    throw new UsageError(`--idempotency-key must be ${IDEMPOTENCY_KEY_RULE}`);
  }
  const { headers, variables, secretVariables } = readSecretInputs(flags, env);
  const request: RunCreateRequest =
    target.kind === 'test'
      ? { testId: target.testId }
      : { projectSlug: target.project, ...(target.suite === null ? {} : { suiteSlug: target.suite }) };
  if (flags.baseUrl !== undefined) request.baseUrl = flags.baseUrl;
  if (Object.keys(headers).length > 0) request.headers = headers;
  if (Object.keys(variables).length > 0) request.variables = variables;
  if (Object.keys(secretVariables).length > 0) request.secretVariables = secretVariables;
  const evidence = {
    ...(flags.trace ? { trace: flags.trace } : {}),
    ...(flags.video ? { video: flags.video } : {}),
    ...(flags.screenshots ? { screenshots: flags.screenshots } : {}),
  };
  if (Object.keys(evidence).length > 0) request.evidence = evidence;
  if (flags.retries !== undefined) request.retries = parseRetries(flags.retries, '--retries');
  const secrets = [...Object.values(headers), ...Object.values(secretVariables)];
  return { target, request, secrets, timeoutMs, pollIntervalMs };
}

/** The ids a 201 answer gives, by mode. */
function enqueuedIds(body: RunCreateResponse): { suiteRunId: string | null; runIds: string[] } {
  if ('suiteRunId' in body) return { suiteRunId: body.suiteRunId, runIds: [] };
  if ('runIds' in body) return { suiteRunId: null, runIds: body.runIds };
  return { suiteRunId: null, runIds: [body.runId] };
}

/** `testrun run`: enqueue, wait, report. Resolves to the exit code. Throws only {@link UsageError}. */
export async function runRunCommand(flags: RunFlags, ctx: CommandContext): Promise<number> {
  const { target, request, secrets, timeoutMs, pollIntervalMs } = parseRunFlags(flags, ctx.env);
  const now = ctx.now ?? Date.now;
  const json = Boolean(flags.json);
  const { out, client } = openCommand(flags, { ...ctx, now }, { json, secrets });
  const idempotencyKey =
    flags.idempotencyKey ?? ctx.env.TESTRUN_IDEMPOTENCY_KEY ?? deriveCiIdempotencyKey(ctx.env, request) ?? undefined;

  try {
    const enqueued = await client.enqueue(request, { idempotencyKey });
    const { suiteRunId, runIds } = enqueuedIds(enqueued.body);
    const replayed = enqueued.replayed ? ' (replayed: this key was already used, nothing new was enqueued)' : '';
    if (target.kind === 'test') out.info(`Enqueued run ${runIds.join('')} of test ${target.testId}${replayed}`);
    else if (suiteRunId !== null)
      out.info(`Enqueued suite run ${suiteRunId} (${target.project}/${target.suite ?? ''})${replayed}`);
    else out.info(`Enqueued ${runIds.length} runs of project ${target.project}${replayed}`);

    const base = {
      kind: target.kind,
      project: target.kind === 'test' ? null : target.project,
      suite: target.kind === 'test' ? null : target.suite,
      testId: target.kind === 'test' ? target.testId : null,
      suiteRunId,
      runIds,
      idempotencyKey: enqueued.idempotencyKey,
      replayed: enqueued.replayed,
    };
    return await followEnqueued({ out, client, now, ctx }, flags, base, { timeoutMs, pollIntervalMs });
  } catch (e) {
    out.done();
    if (!isReportable(e)) throw e;
    return reportFailure(e, out, json);
  }
}

/** What was enqueued, as the report names it. */
type EnqueuedBase = Omit<EnqueuedReport, 'suiteRunUrl' | 'status' | 'exitCode'>;

/** The signals that end a CI job: the CLI cancels what it enqueued on either (unless --no-cancel-on-exit). */
const EXIT_SIGNALS = ['SIGINT', 'SIGTERM'] as const;

/**
 * After the enqueue: prints the ids (with --no-wait), or waits for the verdict and reports it (text,
 * JSON, JUnit), as `testrun run` and `testrun rerun` do. While it waits, SIGINT or SIGTERM (a CI job
 * cancelled) cancels the runs it enqueued, unless --no-cancel-on-exit, and exits 2.
 */
export async function followEnqueued(
  io: { out: Output; client: OpenedClient; now: () => number; ctx: CommandContext },
  flags: FollowFlags,
  base: EnqueuedBase,
  budget: { timeoutMs: number; pollIntervalMs: number },
): Promise<number> {
  const { out, client, now } = io;
  const json = Boolean(flags.json);
  const { suiteRunId, runIds } = base;
  const target = { kind: base.kind, testId: base.testId ?? '' };
  const { timeoutMs, pollIntervalMs } = budget;
  {
    if (!flags.wait) {
      let suiteRunUrl: string | null = null;
      if (suiteRunId !== null) {
        suiteRunUrl = (await client.getSuiteRun(suiteRunId)).suiteRunUrl;
        out.info(`Suite run: ${suiteRunUrl}`);
      }
      const report: EnqueuedReport = { ...base, suiteRunUrl, status: 'queued', exitCode: EXIT.passed };
      out.result(json ? JSON.stringify(report, null, 2) : (suiteRunId ?? runIds.join('\n')));
      return report.exitCode;
    }

    const started = now();
    const progress = new Progress(out, started);
    let timedOut = false;
    const exit = watchExitSignals(io.ctx);
    try {
      const { signal } = exit;
      if (suiteRunId !== null) {
        await client.waitForSuiteRun(suiteRunId, {
          timeoutMs,
          pollIntervalMs,
          signal,
          onProgress: progress.onSuiteRun,
        });
      } else {
        const onProgress = (runs: Run[]) => progress.onRuns(runs);
        const [runId] = runIds;
        if (target.kind === 'test' && runId !== undefined)
          await client.waitForRun(runId, { timeoutMs, pollIntervalMs, signal, onProgress: (r) => onProgress([r]) });
        else await client.waitForRuns(runIds, { timeoutMs, pollIntervalMs, signal, onProgress });
      }
    } catch (e) {
      if (exit.received !== null) return await cancelOnSignal(io, flags, base, exit.received);
      if (!(e instanceof TestrunWaitTimeoutError)) throw e;
      timedOut = true;
      // No poll answered in time: in test and project mode every run counts as still queued, and
      // without an answer its test's name is unknown, so the id stands in for it.
      if (progress.tests.length === 0 && target.kind !== 'suite') {
        progress.assumeQueued(runIds.map((id) => bareTest(id, target.kind === 'test' ? target.testId : id, 'queued')));
      }
    } finally {
      exit.stop();
    }
    out.done();
    const { tests, counts, status, suiteRunUrl } = progress;
    await addDetails(client, tests);

    const exitCode = exitCodeFor(status, timedOut);
    const report: RunReport = {
      ...base,
      suiteRunUrl,
      status,
      counts,
      tests,
      timedOut,
      durationMs: now() - started,
      exitCode,
      message: verdictLine({ kind: target.kind, status, counts, timedOut, tests }, formatDuration(timeoutMs)),
    };
    if (flags.junit) writeFileSync(flags.junit, out.redactText(buildJunitXml(report)));
    for (const line of closingLines(tests)) out.info(line);
    if (suiteRunUrl) out.info(`Details: ${suiteRunUrl}`);
    out.summary(report.message);
    if (json) out.result(JSON.stringify(report, null, 2));
    return exitCode;
  }
}

type OpenedClient = ReturnType<typeof openCommand>['client'];

/**
 * Listens for SIGINT and SIGTERM while the CLI waits (the listeners replace Node's default exit, so
 * the CLI can cancel first), and aborts the wait when one arrives. `received` names it.
 */
function watchExitSignals(ctx: CommandContext): {
  signal: AbortSignal;
  received: NodeJS.Signals | null;
  stop: () => void;
} {
  const controller = new AbortController();
  const source = ctx.signals ?? process;
  const listeners = EXIT_SIGNALS.map((name) => {
    const listener = () => {
      state.received = name;
      controller.abort(new Error(`received ${name}`));
    };
    source.once(name, listener);
    return [name, listener] as const;
  });
  const state = {
    signal: controller.signal,
    received: null as NodeJS.Signals | null,
    stop: () => {
      for (const [name, listener] of listeners) source.off(name, listener);
    },
  };
  return state;
}

/** The job was cancelled: cancel what was enqueued (unless told not to), say so, exit 2. */
async function cancelOnSignal(
  io: { out: Output; client: OpenedClient },
  flags: FollowFlags,
  base: EnqueuedBase,
  received: NodeJS.Signals,
): Promise<number> {
  const { out, client } = io;
  out.done();
  const ids = base.suiteRunId !== null ? [base.suiteRunId] : base.runIds;
  if (!flags.cancelOnExit) {
    out.summary(`Received ${received}; left ${ids.join(', ')} running (--no-cancel-on-exit).`);
    return EXIT.error;
  }
  try {
    if (base.suiteRunId !== null) await client.cancelSuiteRun(base.suiteRunId);
    else for (const id of base.runIds) await client.cancelRun(id);
    out.summary(`Received ${received}; cancelled ${ids.join(', ')}.`);
  } catch (e) {
    if (!isReportable(e)) throw e;
    out.summary(`Received ${received}; could not cancel ${ids.join(', ')}: ${(e as Error).message}`);
  }
  return EXIT.error;
}

/** What the polls have shown so far, printed as it changes. */
class Progress {
  tests: ReportTest[] = [];
  counts: ReportCounts = countStatuses([]);
  status: SuiteRunStatus = 'queued';
  suiteRunUrl: string | null = null;

  constructor(
    private readonly out: Output,
    private readonly started: number,
  ) {}

  readonly onSuiteRun = (s: SuiteRun): void => {
    if (this.suiteRunUrl === null) this.out.info(`Suite run: ${s.suiteRunUrl}`);
    this.suiteRunUrl = s.suiteRunUrl;
    this.tests = testsFromSuiteRun(s);
    this.counts = suiteCounts(s, this.tests);
    this.status = s.status;
    this.out.progress(this.tests, this.counts, this.status, this.started);
  };

  onRuns(runs: readonly Run[]): void {
    this.tests = testsFromRuns(runs);
    ({ counts: this.counts, status: this.status } = summarize(this.tests));
    this.out.progress(this.tests, this.counts, this.status, this.started);
  }

  assumeQueued(tests: ReportTest[]): void {
    this.tests = tests;
    ({ counts: this.counts, status: this.status } = summarize(tests));
  }
}
