// The run executor: claim, definition and secrets, target policy, context, steps, teardown, terminal
// write; what they call lives in the modules imported below.
// Over 300 lines: one attempt's lifecycle in the order it runs, with its teardown in `finally`
// blocks beside what they undo; the step language is still wired into it (no executor interface yet).
import type { BrowserContext, BrowserContextOptions, Page } from 'playwright';
import {
  recordsEvidence,
  type RunErrorCode,
  type RunFailureCode,
  type Step,
  type TerminalRunStatus,
} from '@testrun/contracts';
import {
  CANCELLED_RUNNING_OUTCOME,
  errorMessage,
  finishRun,
  isCancelRequested,
  firstAttemptSummary,
  retryRun,
  type ArtifactStore,
  type ClaimedRun,
  type Db,
  type Logger,
  type RunOutcome,
  type TargetPolicy,
} from '@testrun/core';
import { ArtifactWriter, type PageAtFailure } from './artifact-writer';
import { PageEventLog, type PageEvent } from '../browser/page-events';
import { BrowserClock } from '../browser/browser-clock';
import { applyViolation, PageGuard } from '../browser/page-guard';
import { inTraceGroup, stopRecording, traceOptions } from './recording';
import { claimRun, retrying, type Retrying } from './claim';
import {
  checkDefinition,
  internalErrorOutcome,
  invalidDefinitionOutcome,
  noContextOutcome,
  stepProblemOutcome,
} from './run-outcomes';
import { flakySummary, retriedOutcome } from './retry-policy';
import { DEFAULT_RUN_LIMITS, withRecordingNotes, type RunLimits } from './run-limits';
import { describeStep, executeStep, summarizePass, timelineShot, type StepOutcomeResult } from '../executors/steps';
import { focusedIsPassword, pageTitle } from '../browser/page-devtools';
import type { BlockedRequest } from '../network/egress-proxy';
import {
  baseUrlBlockedOutcome,
  refusalOf,
  runPolicy,
  withBlockedRequest,
  type EgressSource,
} from '../network/run-target';
import { maskOutcome, maskStepResult, openRunSecrets, type RunSecrets } from './run-secrets';
import { SecretMask } from './secret-mask';
import { displayUrl } from '../executors/steps/format';
import { resolveStep } from '../executors/steps/variables';
import { routeTargetHeaders } from '../network/target-headers';
import { untilCancelled, type RunCancels } from './run-cancels';
import { untilFaulted, type RunFaults, type RunOwner } from './run-faults';

/** Where browser contexts come from: the process's warm browser (see BrowserPool). */
export interface ContextSource {
  newContext(options?: BrowserContextOptions): Promise<BrowserContext>;
}

/** What executeRun needs. */
export interface RunDeps {
  db: Db;
  store: ArtifactStore;
  browser: ContextSource;
  /** Key that opens the runs' sealed headers (`deriveKeys(secret).headers`). */
  headersKey: Buffer;
  logger: Logger;
  /**
   * A directory of the worker's own for traces and videos on their way to the artifact store
   * (made and removed by the worker service); files in it are named per run and attempt.
   */
  scratchDir: string;
  /** Record a video of each run (needs Playwright's ffmpeg). Default false. */
  recordVideo?: boolean;
  /**
   * The worker's egress proxy: each run's context goes out through it with credentials of its own,
   * and a request the policy refuses ends the run `target_blocked`. Default none (no proxy).
   */
  egress?: EgressSource;
  /** The deployment's target network policy: the base URL and `goto` URLs are checked before they are opened. */
  targetPolicy?: TargetPolicy;
  /** Longest the teardown (trace, context close, video) may take before it is abandoned. Default 15000 ms. */
  teardownTimeoutMs?: number;
  /**
   * How long the claim or a result write that fails for a passing reason (Postgres restarting) is
   * tried again before the run is given up to the reconciler (WORKER_WRITE_RETRY_MS). Default 600000 ms.
   */
  writeRetryMs?: number;
  /** What each run's pages and recordings may use. Default {@link DEFAULT_RUN_LIMITS}. */
  limits?: RunLimits;
  /** The cancel signals of this process's runs (fed from Redis by the worker service). Default none: runs are stopped only by the reconciler. */
  cancels?: RunCancels;
  /** Told when a cancelled run's browser context has been closed (benchmarks). Default nobody. */
  onContextCancelled?: (runId: string) => void;
  /**
   * Names the run of a fault no caller caught (see RunFaults, fault-guard.ts): each run executes as
   * its owner, and a fault of its ends its attempt `internal_error`. Default none.
   */
  faults?: RunFaults;
}

/** How a call of executeRun ended, for the caller's log and for benchmarks. */
export type RunExecution =
  | {
      kind: 'finished';
      status: TerminalRunStatus;
      /** The failure or error code of a run that did not pass (none when it gave none). */
      code?: RunFailureCode | RunErrorCode;
      attempt: number;
      recorded: boolean;
      timings: RunTimings;
    }
  | { kind: 'not_runnable'; reason: 'missing' | 'terminal' | 'out_of_attempts' };

/** Where the time of one run went: `browserMs` is time spent awaiting Playwright. */
export type RunTimings = { totalMs: number; browserMs: number };

type RunRecord = Omit<ClaimedRun, 'attempt' | 'prevStatus' | 'retry'>;

/** What one run's steps share while they execute. */
type RunScope = {
  deps: RunDeps;
  run: RunRecord;
  clock: BrowserClock;
  writer: ArtifactWriter;
  /** Runs a Postgres call again while it fails for a reason that may pass (an outage). */
  retry: Retrying;
  /** What the egress proxy refused for this run so far (empty without a proxy). */
  blocked?: readonly BlockedRequest[];
  /** The run's target network policy (the deployment's narrowed by the workspace's). */
  policy?: TargetPolicy;
  /** Every secret value the run uses, once they are open: masked in all the run writes. */
  mask: SecretMask;
  /**
   * Aborted when the run is cancelled: the step under way has its Playwright calls aborted, no other
   * starts, and the run ends `cancelled` (see {@link untilCancelled}).
   */
  signal: AbortSignal;
  /** Closes the attempt's context at once, when one is open: for an attempt that does not unwind after a cancel. */
  forceClose?: () => void;
};

/** What a run's steps need of the guard watching their page. */
type Guarded = Pick<PageGuard, 'violation'>;

/**
 * Executes one run end to end: claims it (`startRun`), runs its steps in a fresh browser context,
 * records every step and keeps the screenshots, trace and video its evidence policy asks for, then
 * writes the terminal state (`finishRun`). An attempt that failed or ended in error is attempted
 * again in a fresh context while the run's retries last (`retryRun`), each with its own evidence.
 * Never leaves the run non-terminal for a fault of its own: anything unexpected ends it
 * `error`/`internal_error`. Throws only when Postgres itself cannot be written, so that the job
 * fails and the reconciler takes over.
 */
export async function executeRun(given: RunDeps, runId: string): Promise<RunExecution> {
  if (!given.faults) return execute(given, runId, null);
  return given.faults.run(runId, (owner) => execute(given, runId, owner));
}

async function execute(given: RunDeps, runId: string, owner: RunOwner | null): Promise<RunExecution> {
  const began = performance.now();
  // One statement claims the run, moves its suite counters and returns the snapshot to execute; it
  // is tried again through a Postgres outage, like the result writes.
  const claimed = await claimRun(given.db, runId, given.logger.child({ runId }), given.writeRetryMs);
  if ('unclaimable' in claimed) return { kind: 'not_runnable', reason: claimed.unclaimable };
  // From here every line logged for the run carries the id of the API request that created it.
  const { requestId } = claimed.claim;
  const deps = requestId ? { ...given, logger: given.logger.child({ requestId }) } : given;
  const log = deps.logger.child({ runId });
  const run: RunRecord = claimed.claim;
  let { attempt, retry: testRetry } = claimed.claim;
  const clock = new BrowserClock();
  log.info('run started', { attempt, retry: testRetry, workspaceId: run.workspaceId });

  const signal = deps.cancels?.track(runId) ?? new AbortController().signal;
  try {
    // A cancel asked before this claim (the message came when no worker had the run) ends it now.
    const check = retrying(log, deps.writeRetryMs, { attempt });
    if (await check(() => isCancelRequested(deps.db, runId))) deps.cancels?.cancel(runId);
    // Each test attempt runs in a fresh context under an execution number of its own; a failed one
    // with retries left is recorded and the next begins (retryRun), the last one ends the run. A
    // cancelled run is never tried again.
    for (;;) {
      const retry = retrying(log, deps.writeRetryMs, { attempt });
      const writer = new ArtifactWriter(deps.db, deps.store, { runId, workspaceId: run.workspaceId, attempt }, retry);
      const scope: RunScope = { deps, run, clock, writer, retry, mask: new SecretMask([]), signal };
      if (owner) owner.mask = (text) => scope.mask.text(text);
      let outcome: RunOutcome;
      try {
        outcome = signal.aborted
          ? { status: 'error', ...CANCELLED_RUNNING_OUTCOME }
          : await untilCancelled(untilFaulted(runSteps(scope), owner, scope), scope);
      } catch (error) {
        log.error('run failed inside the worker', { attempt, error: scope.mask.text(errorMessage(error)) });
        outcome = internalErrorOutcome(error);
      }
      // Whatever a step made of its context being closed under it, the run was cancelled.
      if (signal.aborted && outcome.status !== 'passed')
        outcome = { status: 'error', ...CANCELLED_RUNNING_OUTCOME, step: outcome.step ?? null };
      outcome = maskOutcome(scope.mask, outcome);
      // A cancelled attempt (its outcome is `cancelled` by now) is never retried: see retry-policy.ts.
      const retried = retriedOutcome(outcome, testRetry, run.retries);
      if (retried) {
        const ended = attempt;
        const next = await retry(() => retryRun(deps.db, runId, ended, retried, writer.finalRows));
        if (next) {
          log.info('test attempt did not pass; trying again', { attempt, status: outcome.status, retry: next.retry });
          ({ attempt, retry: testRetry } = next);
          continue;
        }
      } else if (outcome.status === 'passed' && testRetry > 0) {
        const first = await retry(() => firstAttemptSummary(deps.db, runId));
        outcome = { ...outcome, resultSummary: flakySummary(outcome.resultSummary, testRetry, run.retries, first) };
      }
      // A retry refused (the run ended or was taken over meanwhile) records nothing more.
      const [final, ended] = [outcome, attempt];
      const recorded = !retried && (await retry(() => finishRun(deps.db, runId, ended, final, writer.finalRows)));
      const timings = { totalMs: performance.now() - began, browserMs: clock.browserMs };
      const code = 'code' in outcome ? (outcome.code ?? undefined) : undefined;
      if (recorded)
        log.info('run finished', {
          attempt,
          retry: testRetry,
          status: outcome.status,
          code,
          durationMs: Math.round(timings.totalMs),
        });
      else
        log.warn('run outcome not recorded: the run was ended or taken over meanwhile', {
          attempt,
          status: outcome.status,
        });
      return { kind: 'finished', status: outcome.status, code, attempt, recorded, timings };
    }
  } finally {
    deps.cancels?.release(runId);
  }
}

/** Checks the run's definition and headers, opens its context and runs its steps in it. */
async function runSteps(scope: RunScope): Promise<RunOutcome> {
  const { deps, run } = scope;
  const checked = checkDefinition(run.steps);
  if ('problem' in checked) return invalidDefinitionOutcome(checked.problem);

  const opened = await openRunSecrets(deps.db, deps.headersKey, run, checked.steps, scope.retry);
  if ('outcome' in opened) return opened.outcome;
  const { headers } = opened.secrets;
  scope.mask = opened.secrets.mask;

  const { targetPolicy } = deps;
  const policy = targetPolicy && (await scope.retry(() => runPolicy(deps.db, targetPolicy, run.workspaceId)));
  const refused = refusalOf(policy, run.baseUrl);
  if (refused) return baseUrlBlockedOutcome(refused);
  const egress = deps.egress?.openRun(`${run.id}.${scope.writer.owner.attempt}`, { policy });
  try {
    // The same scope, not a copy: a secret found while the steps run (a typed password) joins the
    // mask that the run's outcome is written with.
    Object.assign(scope, { blocked: egress?.blocked, policy });
    return await runInContext(scope, headers, egress?.proxy, checked.steps, opened.secrets);
  } finally {
    egress?.close();
  }
}

/** Opens the run's context (through its egress, when there is one) and runs the steps in it. */
async function runInContext(
  scope: RunScope,
  headers: Record<string, string>,
  proxy: BrowserContextOptions['proxy'],
  steps: readonly Step[],
  secrets: RunSecrets,
): Promise<RunOutcome> {
  const { deps, run, clock } = scope;
  let context: BrowserContext;
  try {
    context = await clock.time(
      deps.browser.newContext({
        viewport: { width: 1280, height: 720 },
        ...(proxy ? { proxy } : {}),
        // A page's downloads are never written to the worker's disk.
        acceptDownloads: false,
        // No video unless the run's policy records one: without recordVideo no encoder is started.
        ...(deps.recordVideo && recordsEvidence(run.evidence.video)
          ? { recordVideo: { dir: deps.scratchDir, size: { width: 800, height: 450 } } }
          : {}),
      }),
    );
  } catch (error) {
    return noContextOutcome(error);
  }
  // A cancel never closes the context under the calls still under way on it: Playwright's client
  // throws, outside any caller, on an answer naming an object the close has already disposed of
  // ("Object with guid response@… was not bound in the connection"), and the call it answered never
  // settles (a context closed while its page opens hangs `newPage` for good). The cancel aborts the
  // step's calls instead (StepContext.signal); set-up calls, which take no signal, are short and
  // are let finish. The context is closed by the teardown below, once nothing of the run's is under
  // way; only an attempt that does not unwind is closed under it (untilCancelled).
  scope.forceClose = () => {
    void context.close().then(
      () => deps.onContextCancelled?.(run.id),
      () => undefined,
    );
  };

  const limits = deps.limits ?? DEFAULT_RUN_LIMITS;
  const guard = new PageGuard(context, limits, deps.logger.child({ runId: run.id }));
  const pageEvents = new PageEventLog(context);
  let page: Page | null = null;
  let outcome: RunOutcome;
  let notes: string[];
  let passed = false;
  try {
    const headersReady = await routeTargetHeaders(context, run.baseUrl, headers);
    page = await clock.time(context.newPage());
    await clock.time(headersReady(page));
    // The trace starts once the worker's own set-up (routes, page, its DevTools session) is done, so
    // that its action list holds the test's steps alone.
    await clock.time(guard.watchMain(page));
    const traced = recordsEvidence(run.evidence.trace);
    if (traced) await clock.time(context.tracing.start(traceOptions(run.evidence.trace)));
    outcome = await runInPage(scope, page, steps, secrets, guard, traced ? context : null);
    passed = outcome.status === 'passed';
  } finally {
    scope.forceClose = undefined;
    guard.stop();
    pageEvents.stop();
    scope.writer.recordPageEvents(pageEvents.events.map((e) => maskEvent(scope.mask, e)));
    notes = await stopRecording({
      context,
      page,
      headers,
      mask: scope.mask,
      writer: scope.writer,
      evidence: run.evidence,
      passed,
      clock,
      logger: deps.logger,
      scratchDir: deps.scratchDir,
      boundMs: deps.teardownTimeoutMs ?? 15_000,
      maxFileBytes: limits.maxRecordingBytes,
    });
    if (scope.signal.aborted) deps.onContextCancelled?.(run.id);
    await guard.discardPopupVideos();
    // Step rows and artifacts are written in the background while the browser works; all must be
    // stored before the run is declared finished.
    await scope.writer.flush();
  }
  return withRecordingNotes(outcome, notes);
}

/**
 * Runs the steps in order until one does not pass; the steps after it are recorded as skipped. With
 * `traced` (the run's context, when it records a trace) each step is a named group of the trace.
 */
async function runInPage(
  scope: RunScope,
  page: Page,
  steps: readonly Step[],
  secrets: RunSecrets,
  guard: Guarded,
  traced: BrowserContext | null,
): Promise<RunOutcome> {
  const { run, clock, writer } = scope;
  const started = Date.now();
  const deadline = started + run.timeoutMs;
  const { signal } = scope;
  const ctx = { baseUrl: run.baseUrl, deadline, budgetMs: run.timeoutMs, targetPolicy: scope.policy, signal };
  for (const [i, step] of steps.entries()) {
    const index = i + 1;
    if (scope.signal.aborted) return { status: 'error', ...CANCELLED_RUNNING_OUTCOME, step: index };
    // Variables are put in just before the step runs; what is stored shows the reference and masks the value.
    const resolved = resolveStep(step, secrets.values);
    const label = `${index}. ${scope.mask.text(describeStep(step))}`;
    const executed = await clock.time(inTraceGroup(traced, label, () => executeStep(page, resolved, ctx)));
    if (signal.aborted) {
      // Nothing more is asked of the page: the run ends `cancelled` at this step.
      writer.recordStep(index, step, maskStepResult(scope.mask, executed), null, null);
      return { status: 'error', ...CANCELLED_RUNNING_OUTCOME, step: index };
    }
    // A value typed into a password field is a secret from here on, wherever the run writes it.
    const password = await filledPassword(page, resolved, executed);
    if (password !== null) scope.mask = scope.mask.with(password);
    const { mask } = scope;
    const result = maskStepResult(mask, applyViolation(withBlockedRequest(executed, scope.blocked), guard.violation));
    const time = <T>(work: Promise<T>) => clock.time(work);
    const mode = run.evidence.screenshots;
    const shot = await timelineShot(page, { index, result, mode, deadline, mask, time });
    const problem = stepProblemOutcome(index, step, result);
    const at = problem ? await pageAtFailure(page, mask) : null;
    writer.recordStep(index, step, result, shot, at);
    if (problem) {
      writer.recordSkipped(steps, index, run.baseUrl);
      return problem;
    }
  }
  return { status: 'passed', resultSummary: summarizePass(steps.length, Date.now() - started) };
}

/** Longest wait for the page's title when a step went wrong: a hung page must not hold the run. */
const PAGE_AT_FAILURE_MS = 1_000;

/**
 * The page's URL and title when a step went wrong (masked); null when the page cannot tell. Read
 * over the worker's DevTools session, so that no action of the worker's joins the trace.
 */
async function pageAtFailure(page: Page, mask: SecretMask): Promise<PageAtFailure | null> {
  if (page.isClosed()) return null;
  const title = await pageTitle(page, PAGE_AT_FAILURE_MS);
  return title === null ? null : { url: mask.text(displayUrl(page.url())), title: mask.text(title) };
}

/** How long the check of a filled field's type may take: a busy page must not hold the run. */
const FILLED_FIELD_CHECK_MS = 1_000;

/** The value a step typed into a password input (a fill that passed), else null. */
async function filledPassword(page: Page, step: Step, result: StepOutcomeResult): Promise<string | null> {
  if (step.action !== 'fill' || result.outcome !== 'passed' || step.value.length === 0) return null;
  return (await focusedIsPassword(page, FILLED_FIELD_CHECK_MS)) ? step.value : null;
}

/** A page event with every secret value masked in its texts. */
function maskEvent(mask: SecretMask, event: PageEvent): PageEvent {
  if (mask.isEmpty) return event;
  return { ...event, message: mask.text(event.message), url: event.url === null ? null : mask.text(event.url) };
}
