// One run's lifecycle, whatever defines its test: claim, attempts (run/attempt.ts), retries, the
// terminal write. What a kind of test does in an attempt is its executor's (executors/).
import { finishRun, firstAttemptSummary, retryRun, type ClaimedRun, type RunOutcome } from '@testrun/core/runs';
import { BrowserClock } from '../browser/browser-clock';
import { runAttempt, type RunContext } from './attempt';
import { claimRun } from './claim';
import type { Executor, MemberOf } from './executor';
import type { RunDeps, RunExecution } from './run-deps';
import { flakySummary, retriedOutcome } from './retry-policy';
import { cannotRunOutcome } from './run-outcomes';
import type { RunOwner } from './run-faults';

/**
 * Executes one run end to end: claims it (`startRun`), has its executor run it in a fresh browser
 * context, records every step and keeps the screenshots, trace and video its evidence policy asks
 * for, then writes the terminal state (`finishRun`). An attempt that failed or ended in error is
 * attempted again in a fresh context while the run's retries last (`retryRun`), each with its own
 * evidence. Never leaves the run non-terminal for a fault of its own: anything unexpected ends it
 * `error`/`internal_error`. Throws only when Postgres itself cannot be written, so that the job
 * fails and the reconciler takes over.
 */
export function executeRun(given: RunDeps, runId: string): Promise<RunExecution> {
  return asOwner(given, runId, null);
}

/**
 * The port a batch records its members through (RunMember): the member's own lifecycle, as
 * {@link executeRun}'s, with the batch's executor for its attempts and the target policy the batch's
 * leader read. The member is claimed under the batch (its test began in the batch's sandbox) and
 * its kind, gathering and arrival are not looked at again.
 */
export function executeMember(given: RunDeps, runId: string, batch: MemberOf): Promise<RunExecution> {
  return asOwner(given, runId, batch);
}

function asOwner(given: RunDeps, runId: string, batch: MemberOf | null): Promise<RunExecution> {
  if (!given.faults) return execute(given, runId, null, batch);
  return given.faults.run(runId, (owner) => execute(given, runId, owner, batch));
}

/**
 * `batch`: the run is a member of that batch (a {@link RunMember}, claimed as its test begins in
 * the batch's sandbox), executed by the executor the batch gives. Work an executor holds the job for
 * (a batch it leads) is awaited in `held` of the execution.
 */
async function execute(
  given: RunDeps,
  runId: string,
  owner: RunOwner | null,
  batch: MemberOf | null,
): Promise<RunExecution> {
  const began = performance.now();
  // One statement claims the run, moves its suite counters and returns the snapshot to execute; it
  // is tried again through a Postgres outage, like the result writes.
  const log = given.logger.child({ runId });
  const { holds } = given;
  const claimed = await claimRun(given.db, runId, log, given.writeRetryMs, batch?.id ?? null, holds?.holdMs ?? null);
  if ('unclaimable' in claimed) return { kind: 'not_runnable', reason: claimed.unclaimable };
  holds?.hold(runId);
  try {
    return await claimedRun(given, claimed.claim, owner, batch, began);
  } finally {
    holds?.release(runId);
  }
}

/** The run claimed: its attempts, under the cancel signal and the log of its own. */
async function claimedRun(
  given: RunDeps,
  claim: ClaimedRun,
  owner: RunOwner | null,
  batch: MemberOf | null,
  began: number,
): Promise<RunExecution> {
  const runId = claim.id;
  given.jobs?.claimed(claim);
  // From here every line logged for the run carries the id of the API request that created it.
  const { requestId } = claim;
  const deps = requestId ? { ...given, logger: given.logger.child({ requestId }) } : given;
  const rc: RunContext = {
    deps,
    run: claim,
    executor: batch?.executor ?? executorOf(deps.executors, claim.kind),
    log: deps.logger.child({ runId }),
    clock: new BrowserClock(),
    signal: deps.cancels?.track(runId) ?? new AbortController().signal,
    owner,
    batchPolicy: batch && { policy: batch.policy },
    hold: (work) => held.push(work.then(noop, noop)),
  };
  const held: Promise<void>[] = [];
  rc.log.info('run started', { attempt: claim.attempt, retry: claim.retry, workspaceId: claim.workspaceId });
  try {
    // A cancel asked before this claim (the message came when no worker had the run) ends it now.
    if (claim.cancelRequested) deps.cancels?.cancel(runId);
    const execution = await attempts(rc, claim.attempt, claim.retry, began);
    return { ...execution, held: Promise.all(held).then(noop) };
  } finally {
    deps.cancels?.release(runId);
  }
}

/**
 * Each test attempt runs in a fresh context under an execution number of its own; a failed one with
 * retries left is recorded and the next begins (retryRun), the last one ends the run. A cancelled
 * run is never tried again.
 */
async function attempts(rc: RunContext, first: number, firstRetry: number, began: number): Promise<Finished> {
  const { deps, run, log } = rc;
  let [attempt, testRetry] = [first, firstRetry];
  for (;;) {
    const ran = await runAttempt(rc, attempt);
    const { writer, retry } = ran;
    // Tries the test's own runner made within the attempt were recorded as attempts of their own.
    [attempt, testRetry] = [ran.attempt, testRetry + ran.tried];
    let outcome: RunOutcome = ran.outcome;
    // A cancelled attempt (its outcome is `cancelled` by now) is never retried: see retry-policy.ts.
    const retried = retriedOutcome(outcome, testRetry, run.retries);
    if (retried) {
      const ended = attempt;
      const next = await retry(() => retryRun(deps.db, run.id, ended, retried, writer.finalRows));
      if (next) {
        log.info('test attempt did not pass; trying again', { attempt, status: outcome.status, retry: next.retry });
        ({ attempt, retry: testRetry } = next);
        continue;
      }
    } else if (outcome.status === 'passed' && testRetry > 0) {
      const firstSummary = await retry(() => firstAttemptSummary(deps.db, run.id));
      outcome = {
        ...outcome,
        // Past the run's own retries, the retries were the test's runner's (its config's).
        resultSummary: flakySummary(
          outcome.resultSummary,
          testRetry,
          testRetry <= run.retries ? run.retries : null,
          firstSummary,
        ),
      };
    }
    // A retry refused (the run ended or was taken over meanwhile) records nothing more.
    const [final, ended] = [outcome, attempt];
    const recorded = !retried && (await retry(() => finishRun(deps.db, run.id, ended, final, writer.finalRows)));
    const timings = { totalMs: performance.now() - began, browserMs: rc.clock.browserMs };
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
}

function noop(): void {}

/**
 * The executor of a run's kind; for a kind this worker has none of (a newer service's run, or an
 * executor turned off), one whose every attempt ends `error`/`internal_error` saying so.
 */
function executorOf(executors: RunDeps['executors'], kind: string): Executor {
  const executor = Object.hasOwn(executors, kind) ? executors[kind] : undefined;
  if (executor) return executor;
  const outcome = cannotRunOutcome(`this worker has no executor for tests of kind "${kind}"`);
  return { prepare: () => Promise.resolve({ outcome }) };
}

type Finished = Extract<RunExecution, { kind: 'finished' }>;
