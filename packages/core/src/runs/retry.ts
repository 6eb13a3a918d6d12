import type { RunErrorCode, RunFailureCode } from '@testrun/contracts';
import type { DbTx } from '../db';
import { insertArtifactsSql, type ArtifactRow } from './artifacts';
import { ATTEMPT_DEADLINE } from './deadline';

/** How a test attempt that will be retried ended: as a run outcome, failed or error only. */
export type RetriedOutcome = {
  status: 'failed' | 'error';
  code?: RunFailureCode | RunErrorCode | null;
  resultSummary: string;
  message?: string | null;
  /** 1-based index of the step the outcome comes from. */
  step?: number | null;
};

/** The run's next test attempt, as retryRun started it. */
export type NextAttempt = {
  /** The execution number of the new attempt: its steps and artifacts are kept under it. */
  attempt: number;
  /** 0-based index of the new test attempt. */
  retry: number;
};

/**
 * Ends test attempt `attempt` of a `running` run as `outcome` and starts its next one, in one
 * statement: the ended attempt becomes a `run_attempts` row (its outcome, when it started and
 * ended) and the run stays `running` with a new execution number (`attempt + 1`, so the new
 * attempt's steps and evidence are kept apart), `retry + 1` and a fresh time budget. The suite run
 * does not move: its child is running throughout. Returns null, changing nothing, when the run is
 * no longer running under that attempt (ended or taken over meanwhile) or has no retry left. The
 * ended attempt's last artifacts (trace, video) are recorded in the same statement either way, as
 * finishRun does.
 *
 * `tried`: the attempt was a try the test's own runner made and retried within one execution (a
 * Playwright config's retries, docs/PLAYWRIGHT.md): it is recorded with the times it ran, the run's
 * `retries` (the service's allowance) is not consulted, and its time budget is left as it is (the
 * next try has run already, within the same execution).
 */
export async function retryRun(
  tx: DbTx,
  runId: string,
  attempt: number,
  outcome: RetriedOutcome,
  artifacts: readonly ArtifactRow[] = [],
  tried: { startedAt: Date; finishedAt: Date } | null = null,
): Promise<NextAttempt | null> {
  const rows = await tx.$queryRawUnsafe<NextAttempt[]>(
    `WITH u AS (
       UPDATE runs r SET attempt = r.attempt + 1, retry = r.retry + 1,
         deadline_at = CASE WHEN $9::boolean THEN r.deadline_at
           ELSE ${ATTEMPT_DEADLINE} END,
         result_summary = 'Running: retry ' || (r.retry + 1) || CASE WHEN $9::boolean THEN ''
           ELSE ' of ' || r.retries END || '.'
       WHERE r.id = $1 AND r.status = 'running' AND r.attempt = $2 AND ($9::boolean OR r.retry < r.retries)
       RETURNING r.id, r.attempt, r.retry, r.started_at),
     a AS (
       INSERT INTO run_attempts (run_id, retry, attempt, status, result_summary, outcome_code, outcome_message,
         outcome_step, started_at, finished_at, duration_ms)
       SELECT u.id, u.retry - 1, u.attempt - 1, $3::"RunStatus", $4, $5::"RunOutcomeCode", $6, $7::int,
         b.began, b.ended, GREATEST(0, (EXTRACT(EPOCH FROM (b.ended - b.began)) * 1000)::int)
       FROM u CROSS JOIN LATERAL (
         -- An attempt starts when the one before it ended (the first, when the run started).
         SELECT COALESCE($10::timestamptz,
           GREATEST(u.started_at, (SELECT max(x.finished_at) FROM run_attempts x WHERE x.run_id = u.id))) AS began,
           COALESCE($11::timestamptz, now()) AS ended) b
       RETURNING run_id),
     f AS (${insertArtifactsSql(8)})
     SELECT u.attempt, u.retry FROM u`,
    runId,
    attempt,
    outcome.status,
    outcome.resultSummary,
    outcome.code ?? null,
    outcome.message ?? null,
    outcome.step ?? null,
    JSON.stringify(artifacts),
    tried !== null,
    tried?.startedAt ?? null,
    tried?.finishedAt ?? null,
  );
  return rows[0] ?? null;
}

/** The result summary of a run's first test attempt, when it was retried (null otherwise). */
export async function firstAttemptSummary(tx: DbTx, runId: string): Promise<string | null> {
  const rows = await tx.$queryRaw<Array<{ result_summary: string }>>`
    SELECT result_summary FROM run_attempts WHERE run_id = ${runId} AND retry = 0`;
  return rows[0]?.result_summary ?? null;
}
