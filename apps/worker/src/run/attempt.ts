import { errorMessage, type Logger } from '@testrun/core/logger';
import { CANCELLED_RUNNING_OUTCOME, retryRun, type RunOutcome } from '@testrun/core/runs';
import type { TargetPolicy } from '@testrun/core/target-policy';
import type { BrowserClock } from '../browser/browser-clock';
import { baseUrlBlockedOutcome, refusalOf, runPolicy } from '../network/run-target';
import { ArtifactWriter } from './artifact-writer';
import { retrying, type Retrying } from './claim';
import type { Executor, ExecutorAttempt, PreparedRun, RunRecord } from './executor';
import type { RunDeps } from './run-deps';
import { untilCancelled } from './run-cancels';
import { untilFaulted, type RunOwner } from './run-faults';
import { internalErrorOutcome } from './run-outcomes';
import { maskOutcome } from './run-secrets';
import { SecretMask } from './secret-mask';

/** What every attempt of one run shares: built once when the run is claimed, never changed. */
export interface RunContext {
  readonly deps: RunDeps;
  readonly run: RunRecord;
  /** The run's executor, chosen by its kind. */
  readonly executor: Executor;
  readonly log: Logger;
  readonly clock: BrowserClock;
  /** Aborted when the run is cancelled (see RunCancels). */
  readonly signal: AbortSignal;
  /** The run as its faults see it (see RunFaults); null when faults are not attributed. */
  readonly owner: RunOwner | null;
  /**
   * A member of a batch goes out through its batch's network, under the target policy the batch's
   * leader read (`policy`): it reads none of its own. Null for any other run.
   */
  readonly batchPolicy: { policy: TargetPolicy | undefined } | null;
  /** Keeps the run's job until `work` settles. */
  readonly hold: ExecutorAttempt['holdJob'];
}

/**
 * How one attempt ended: its outcome (masked), the writer that holds its rows, its retried writes,
 * and the execution number the outcome is of with the tries recorded before it (`tried`: a test
 * its own runner retried within the attempt, each earlier try an attempt of the run of its own).
 */
export type AttemptResult = {
  outcome: RunOutcome;
  writer: ArtifactWriter;
  retry: Retrying;
  attempt: number;
  tried: number;
};

/**
 * One test attempt under execution number `attempt`: the executor prepares the run, the target
 * policy is read and checked against its base URL, and the executor runs it (opening what it needs:
 * a browser context, a sandbox, each through the egress); a cancel or a fault of the run's ends it. Never throws for a fault of the attempt's: that is an `internal_error` outcome.
 */
export async function runAttempt(rc: RunContext, attempt: number): Promise<AttemptResult> {
  const { deps, run, log, signal, owner } = rc;
  const retry = retrying(log, deps.writeRetryMs, { attempt });
  const writerOf = (execution: number) =>
    new ArtifactWriter(deps.db, deps.store, { runId: run.id, workspaceId: run.workspaceId, attempt: execution }, retry);
  // The try under way: the attempt's own, then each try its test's runner made after it (nextTry).
  let current = { writer: writerOf(attempt), attempt, tried: 0 };
  const nextTry: ExecutorAttempt['nextTry'] = async (ended, ran) => {
    const was = current;
    await was.writer.flush();
    const next = await retry(() => retryRun(deps.db, run.id, was.attempt, ended, was.writer.finalRows, ran));
    if (!next) return null;
    log.info('test try did not pass; its runner tried again', { attempt: was.attempt, status: ended.status });
    current = { writer: writerOf(next.attempt), attempt: next.attempt, tried: was.tried + 1 };
    return current.writer;
  };
  const { writer } = current;
  // What the attempt learns as it goes, held here and handed over by the executor's calls: the mask
  // of the secrets it opened, and how to close its browser context under it.
  let mask = new SecretMask([]);
  let forceClose: (() => void) | null = null;
  const maskGrew = (grown: SecretMask) => {
    mask = grown;
  };
  if (owner) owner.mask = (text) => mask.text(text);
  const under = { signal, forceClose: () => forceClose?.() };
  const closeUnder = (close: (() => void) | null) => {
    forceClose = close;
  };
  let outcome: RunOutcome;
  try {
    outcome = signal.aborted
      ? { status: 'error', ...CANCELLED_RUNNING_OUTCOME }
      : await untilCancelled(
          untilFaulted(prepareAndExecute(rc, { attempt, writer, retry, maskGrew, closeUnder, nextTry }), owner, under),
          under,
        );
  } catch (error) {
    log.error('run failed inside the worker', { attempt, error: mask.text(errorMessage(error)) });
    outcome = internalErrorOutcome(error);
  }
  // Whatever a step made of its context being closed under it, the run was cancelled.
  if (signal.aborted && outcome.status !== 'passed')
    outcome = { status: 'error', ...CANCELLED_RUNNING_OUTCOME, step: outcome.step ?? null };
  const ran = current;
  return { outcome: maskOutcome(mask, outcome), writer: ran.writer, retry, attempt: ran.attempt, tried: ran.tried };
}

/** The attempt's own parts, made by {@link runAttempt}. */
type AttemptParts = Pick<ExecutorAttempt, 'attempt' | 'writer' | 'maskGrew' | 'closeUnder' | 'nextTry'> & {
  retry: Retrying;
};

/** Prepares the run (definition, secrets), checks its base URL against the policy and executes it. */
async function prepareAndExecute(rc: RunContext, parts: AttemptParts): Promise<RunOutcome> {
  const { deps, run } = rc;
  const prepared = await rc.executor.prepare({ run, db: deps.db, headersKey: deps.headersKey, retry: parts.retry });
  if ('outcome' in prepared) return prepared.outcome;
  parts.maskGrew(prepared.prepared.mask);

  const { targetPolicy } = deps;
  const policy = rc.batchPolicy
    ? rc.batchPolicy.policy
    : targetPolicy && (await parts.retry(() => runPolicy(deps.db, targetPolicy, run.workspaceId)));
  const refused = refusalOf(policy, run.baseUrl);
  if (refused) return baseUrlBlockedOutcome(refused);
  return executeAttempt(rc, prepared.prepared, parts, policy);
}

/** Builds the executor's view of the attempt, once, and executes it. */
function executeAttempt(
  rc: RunContext,
  prepared: PreparedRun,
  parts: AttemptParts,
  policy: TargetPolicy | undefined,
): Promise<RunOutcome> {
  const attempt: ExecutorAttempt = {
    run: rc.run,
    attempt: parts.attempt,
    writer: parts.writer,
    clock: rc.clock,
    signal: rc.signal,
    policy,
    logger: rc.deps.logger,
    maskGrew: parts.maskGrew,
    closeUnder: parts.closeUnder,
    nextTry: parts.nextTry,
    holdJob: rc.hold,
  };
  return prepared.execute(attempt);
}
