import {
  RUN_STATUSES,
  RUN_TRANSITIONS,
  type RunErrorCode,
  type RunFailureCode,
  type RunStatus,
  type SkipReason,
} from '@testrun/contracts';
import type { DbTx } from '../db';
import { insertArtifactsSql, type ArtifactRow } from './artifacts';
import { HOLD_LIVE } from './holds';

export { deriveSuiteStatus, type SuiteCounts } from '@testrun/contracts';

export function canTransition(from: RunStatus, to: RunStatus): boolean {
  return RUN_TRANSITIONS[from].includes(to);
}

/** The moved run's times, as `u` returns them to SUITE_MOVE. */
export const RUN_TIMES = 'r.started_at AS run_started_at, r.finished_at AS run_finished_at';

/** What an UPDATE of `runs r` joined to `p` (the run's status before, `prev_status`) returns for SUITE_MOVE. */
export const MOVED_COLUMNS = `r.id, r.suite_run_id, p.prev_status, r.status AS new_status, r.attempt, ${RUN_TIMES}`;

/**
 * The suite-run update that moves one child from `u.prev_status` to `u.new_status`, as SQL over a
 * CTE `u`. In an UPDATE's SET every column reads the row as it was, so each counter's new value is
 * spelled out and the aggregate status is derived from those new values, with the rule of
 * deriveSuiteStatus. Under READ COMMITTED a concurrent update of the same suite run waits for the
 * row lock and then re-evaluates against the newest row, so counters never lose an increment.
 *
 * The times come from the run's own (`u.run_started_at`, `u.run_finished_at`), never from this
 * statement's clock: a transaction's now() is when it began, and two transactions may take the
 * suite run's lock in the other order. So the start is the earliest of its runs' starts, and the
 * finish the latest of their finishes (kept as they come in `last_run_finished_at`).
 */
function suiteMoveSql(): string {
  const next = (c: RunStatus) => `(s.${c}_count - (u.prev_status = '${c}')::int + (u.new_status = '${c}')::int)`;
  const [queued, passed, failed, error, skipped] = [
    next('queued'),
    next('passed'),
    next('failed'),
    next('error'),
    next('skipped'),
  ];
  const status = `CASE
      WHEN ${queued} > 0 AND ${queued} + ${skipped} = s.total_count THEN 'queued'
      WHEN ${passed} + ${failed} + ${error} + ${skipped} < s.total_count THEN 'running'
      WHEN ${failed} > 0 THEN 'failed'
      WHEN ${error} > 0 THEN 'error'
      WHEN ${skipped} = s.total_count THEN 'skipped'
      ELSE 'passed' END`;
  // The latest finish among the suite run's runs, this move's included.
  const lastFinish = 'GREATEST(s.last_run_finished_at, u.run_finished_at)';
  return `UPDATE suite_runs s SET
      ${RUN_STATUSES.map((c) => `${c}_count = ${next(c)}`).join(',\n      ')},
      status = (${status})::"RunStatus",
      started_at = CASE WHEN u.prev_status = 'queued' THEN LEAST(s.started_at, COALESCE(u.run_started_at, now()))
        ELSE s.started_at END,
      last_run_finished_at = ${lastFinish},
      finished_at = CASE WHEN (${status}) IN ('passed', 'failed', 'error', 'skipped')
        THEN COALESCE(s.finished_at, ${lastFinish}, now()) ELSE NULL END
    FROM u WHERE s.id = u.suite_run_id AND u.prev_status <> u.new_status`;
}

export const SUITE_MOVE = suiteMoveSql();

export type MovedRow = {
  id: string;
  suite_run_id: string | null;
  prev_status: RunStatus;
  new_status: RunStatus;
  attempt: number;
};

type OutcomeDetails = {
  resultSummary: string;
  message?: string | null;
  /** 1-based index of the step the outcome comes from. */
  step?: number | null;
  durationMs?: number | null;
};

/**
 * What a terminal write records besides the status: the code's kind follows the status (the
 * database's CHECK constraint says the same), so a failure code can never reach the wire's error.
 */
export type RunOutcome =
  | (OutcomeDetails & { status: 'passed' })
  | (OutcomeDetails & { status: 'failed'; code?: RunFailureCode | null })
  | (OutcomeDetails & { status: 'error'; code?: RunErrorCode | null })
  | (OutcomeDetails & { status: 'skipped'; skipReason?: SkipReason | null });

/** What ends a run `error` from outside its worker (see abortRun). */
export type AbortOutcome = Omit<OutcomeDetails, 'durationMs'> & { code: RunErrorCode };

/**
 * Moves a run from `running` (attempt `attempt`) to a terminal status, erases its sealed headers and
 * updates its suite run, in one statement (so one round trip and one commit, atomically). The last
 * artifacts of the run (its trace and video, stored once the browser closed) are recorded in the
 * same statement, whether or not the move is accepted: the files exist either way. Returns false, changing
 * nothing, when the run is no longer in that state and attempt (a duplicate delivery, or a newer
 * attempt owns it).
 */
export async function finishRun(
  tx: DbTx,
  runId: string,
  attempt: number,
  outcome: RunOutcome,
  artifacts: readonly ArtifactRow[] = [],
): Promise<boolean> {
  const rows = await tx.$queryRawUnsafe<MovedRow[]>(
    `WITH p AS (SELECT id, status AS prev_status FROM runs WHERE id = $1 FOR UPDATE),
     u AS (
       UPDATE runs r SET status = $2::"RunStatus", result_summary = $3, outcome_code = $4::"RunOutcomeCode",
         outcome_message = $5, outcome_step = $6::int, skip_reason = $7::"SkipReason", finished_at = now(), headers_sealed = NULL, variables_sealed = NULL,
         duration_ms = COALESCE($8::int, (EXTRACT(EPOCH FROM (now() - r.started_at)) * 1000)::int)
       FROM p WHERE r.id = p.id AND r.status = 'running' AND r.attempt = $9
       RETURNING ${MOVED_COLUMNS}),
     s AS (${SUITE_MOVE} RETURNING s.id),
     a AS (${insertArtifactsSql(10)})
     SELECT u.id FROM u`,
    runId,
    outcome.status,
    outcome.resultSummary,
    'code' in outcome ? (outcome.code ?? null) : null,
    outcome.message ?? null,
    outcome.step ?? null,
    'skipReason' in outcome ? (outcome.skipReason ?? null) : null,
    outcome.durationMs ?? null,
    attempt,
    JSON.stringify(artifacts),
  );
  return rows.length > 0;
}

/**
 * Ends a run that is `queued` or `running` (any attempt) as `error`: time budget exceeded, worker
 * lost, cannot start. Returns false when the run was already terminal, and with `unlessHeld` while
 * a worker's hold of the run is live (`held_until`, renewed by a live worker: renewHolds), which is
 * how a run is ended `worker_lost` only once its worker is gone.
 */
export async function abortRun(
  tx: DbTx,
  runId: string,
  outcome: AbortOutcome,
  { unlessHeld = false }: { unlessHeld?: boolean } = {},
): Promise<boolean> {
  const rows = await tx.$queryRawUnsafe<MovedRow[]>(
    `WITH p AS (SELECT id, status AS prev_status FROM runs WHERE id = $1 FOR UPDATE),
     u AS (
       UPDATE runs r SET status = 'error'::"RunStatus", result_summary = $2, outcome_code = $3::"RunOutcomeCode",
         outcome_message = $4,
         outcome_step = $5::int, finished_at = now(), headers_sealed = NULL, variables_sealed = NULL,
         duration_ms = CASE WHEN r.started_at IS NULL THEN NULL ELSE (EXTRACT(EPOCH FROM (now() - r.started_at)) * 1000)::int END
       FROM p WHERE r.id = p.id AND r.status IN ('queued', 'running')
         AND NOT ($6::boolean AND ${HOLD_LIVE})
       RETURNING ${MOVED_COLUMNS}),
     s AS (${SUITE_MOVE} RETURNING s.id)
     SELECT u.id FROM u`,
    runId,
    outcome.resultSummary,
    outcome.code,
    outcome.message ?? null,
    outcome.step ?? null,
    unlessHeld,
  );
  return rows.length > 0;
}
