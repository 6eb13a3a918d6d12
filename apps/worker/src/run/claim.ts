import type { Db } from '@testrun/core/db';
import { errorMessage, type Logger } from '@testrun/core/logger';
import { abortRun, runClaim, type ClaimedRun, type UnclaimedRun } from '@testrun/core/runs';
import { retryWrite } from './retry-write';
import { MAX_RUN_ATTEMPTS, workerLostOutcome } from './run-outcomes';

/** Runs a Postgres call or an artifact write again while it fails for a reason that may pass (see retryWrite). */
export type Retrying = <T>(call: () => Promise<T>) => Promise<T>;

/** Default bound of the retries: WORKER_WRITE_RETRY_MS's default. */
const DEFAULT_RETRY_MS = 600_000;

/** A {@link Retrying} bounded by `boundMs` that logs each retry with `fields`. */
export function retrying(log: Logger, boundMs: number | undefined, fields: Record<string, unknown> = {}): Retrying {
  return (call) =>
    retryWrite(call, {
      boundMs: boundMs ?? DEFAULT_RETRY_MS,
      onRetry: (error, tries, delayMs) =>
        log.warn('Postgres or artifact store call failed; trying again', {
          ...fields,
          tries,
          delayMs,
          error: errorMessage(error),
        }),
    });
}

/**
 * Why a run's job found nothing to run (`batched`: a Playwright batch holds it, docs/PLAYWRIGHT.md;
 * `held`: a live worker still runs it, and the reconciler gives it a job again if its hold lapses;
 * `waiting`: another test of its Playwright file runs elsewhere, and its job comes back later).
 */
export type Unclaimable = 'missing' | 'terminal' | 'out_of_attempts' | 'batched' | 'held' | 'waiting';

/**
 * Claims the run, trying again through a Postgres outage for up to `boundMs` (the job's lock in Redis is renewed meanwhile)
 * (`runClaim` makes a try after a lost reply recognise its own claim instead of taking a second
 * attempt). When the run cannot be claimed, says why, having ended it `worker_lost` when it was out
 * of attempts. `holdMs`: the claim's hold of the run (RunHolds).
 */
export async function claimRun(
  db: Db,
  runId: string,
  log: Logger,
  boundMs?: number,
  batchId: string | null = null,
  holdMs: number | null = null,
): Promise<{ claim: ClaimedRun } | { unclaimable: Unclaimable }> {
  const retry = retrying(log, boundMs, { step: 'claim' });
  const tried = await retry(runClaim(db, runId, MAX_RUN_ATTEMPTS, batchId, holdMs));
  if ('claimed' in tried) return { claim: tried.claimed };
  return { unclaimable: await endUnclaimable(db, runId, tried.unclaimed, log, retry) };
}

/**
 * The claim refused (its statement said what the run was): the run is gone, already terminal, held
 * by a live Playwright batch or a live worker, or out of attempts (then it ends worker_lost).
 */
async function endUnclaimable(
  db: Db,
  runId: string,
  run: UnclaimedRun | null,
  log: Logger,
  retry: Retrying,
): Promise<Unclaimable> {
  if (!run) {
    log.warn('job for a run that does not exist');
    return 'missing';
  }
  if (run.status !== 'queued' && run.status !== 'running') return 'terminal';
  if (run.batchHeld) return 'batched';
  if (run.groupBusy) return 'waiting';
  if (run.workerHeld) {
    log.warn('job for a run its worker still holds: left to that worker', { attempt: run.attempt });
    return 'held';
  }
  // Tried again after a lost reply, abortRun finds the run terminal and returns false: harmless.
  const ended = await retry(() => abortRun(db, runId, workerLostOutcome(run.attempt)));
  if (ended) log.warn('run ended: its worker was lost on every attempt', { attempt: run.attempt });
  return 'out_of_attempts';
}
