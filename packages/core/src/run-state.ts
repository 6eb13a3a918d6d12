import { RUN_TRANSITIONS, type RunStatus, type SuiteRunStatus, type TerminalRunStatus } from '@testrun/contracts';
import type { DbTx } from './db';

/** Counts of a suite run's children by status. */
export type SuiteCounts = {
  total: number;
  queued: number;
  running: number;
  passed: number;
  failed: number;
  error: number;
  skipped: number;
};

/**
 * The aggregate rule: queued while every child is queued; running once any child has left queued
 * and not all are terminal; when all are terminal, failed if any failed, else error if any errored,
 * else skipped if all were skipped, else passed. A child created `skipped` (a disabled test) never
 * was queued, so it has not "left" queued: a suite run whose other children all wait is `queued`.
 */
export function deriveSuiteStatus(c: SuiteCounts): SuiteRunStatus {
  if (c.queued > 0 && c.queued + c.skipped === c.total) return 'queued';
  if (c.passed + c.failed + c.error + c.skipped < c.total) return 'running';
  if (c.failed > 0) return 'failed';
  if (c.error > 0) return 'error';
  if (c.skipped === c.total) return 'skipped';
  return 'passed';
}

export function canTransition(from: RunStatus, to: RunStatus): boolean {
  return RUN_TRANSITIONS[from].includes(to);
}

const COUNTER_COLUMN: Record<RunStatus, string> = {
  queued: 'queued_count',
  running: 'running_count',
  passed: 'passed_count',
  failed: 'failed_count',
  error: 'error_count',
  skipped: 'skipped_count',
};

type RunRow = { id: string; suite_run_id: string | null; prev_status: RunStatus; attempt: number };

/** What a terminal write records besides the status. */
export type RunOutcome = {
  status: TerminalRunStatus;
  resultSummary: string;
  code?: string | null;
  message?: string | null;
  step?: number | null;
  skipReason?: string | null;
  durationMs?: number | null;
};

/**
 * Moves a run from `running` (attempt `attempt`) to a terminal status, erases its sealed headers and
 * updates its suite run in the same transaction. Returns false, changing nothing, when the run is
 * no longer in that state and attempt (a duplicate delivery, or a newer attempt owns it).
 */
export async function finishRun(tx: DbTx, runId: string, attempt: number, outcome: RunOutcome): Promise<boolean> {
  const rows = await tx.$queryRaw<RunRow[]>`
    UPDATE runs r SET status = ${outcome.status}::"RunStatus", result_summary = ${outcome.resultSummary},
      outcome_code = ${outcome.code ?? null}, outcome_message = ${outcome.message ?? null}, outcome_step = ${outcome.step ?? null},
      skip_reason = ${outcome.skipReason ?? null}, finished_at = now(), headers_sealed = NULL,
      duration_ms = COALESCE(${outcome.durationMs ?? null}::int, (EXTRACT(EPOCH FROM (now() - r.started_at)) * 1000)::int)
    FROM (SELECT id, status AS prev_status FROM runs WHERE id = ${runId} FOR UPDATE) p
    WHERE r.id = p.id AND r.status = 'running' AND r.attempt = ${attempt}
    RETURNING r.id, r.suite_run_id, p.prev_status, r.attempt`;
  const row = rows[0];
  if (!row) return false;
  if (row.suite_run_id) await moveSuiteCounter(tx, row.suite_run_id, row.prev_status, outcome.status);
  return true;
}

/**
 * Ends a run that is `queued` or `running` (any attempt) as `error`: time budget exceeded, worker
 * lost, cannot start. Returns false when the run was already terminal.
 */
export async function abortRun(tx: DbTx, runId: string, outcome: Omit<RunOutcome, 'status'> & { code: string }): Promise<boolean> {
  const rows = await tx.$queryRaw<RunRow[]>`
    UPDATE runs r SET status = 'error'::"RunStatus", result_summary = ${outcome.resultSummary},
      outcome_code = ${outcome.code}, outcome_message = ${outcome.message ?? null}, outcome_step = ${outcome.step ?? null},
      finished_at = now(), headers_sealed = NULL,
      duration_ms = CASE WHEN r.started_at IS NULL THEN NULL ELSE (EXTRACT(EPOCH FROM (now() - r.started_at)) * 1000)::int END
    FROM (SELECT id, status AS prev_status FROM runs WHERE id = ${runId} FOR UPDATE) p
    WHERE r.id = p.id AND r.status IN ('queued', 'running')
    RETURNING r.id, r.suite_run_id, p.prev_status, r.attempt`;
  const row = rows[0];
  if (!row) return false;
  if (row.suite_run_id) await moveSuiteCounter(tx, row.suite_run_id, row.prev_status, 'error');
  return true;
}

/**
 * Claims a run for a worker: `queued` → `running`, or a `running` run whose worker was lost taken
 * over by a new attempt while attempts remain. Returns the new attempt number and the previous
 * status, or null when the run is terminal or out of attempts (the caller then ends it).
 */
export async function startRun(tx: DbTx, runId: string, maxAttempts: number): Promise<{ attempt: number; prevStatus: RunStatus } | null> {
  const rows = await tx.$queryRaw<RunRow[]>`
    UPDATE runs r SET status = 'running'::"RunStatus", attempt = r.attempt + 1, started_at = now(),
      deadline_at = now() + make_interval(secs => r.timeout_ms / 1000.0),
      result_summary = 'Running.'
    FROM (SELECT id, status AS prev_status FROM runs WHERE id = ${runId} FOR UPDATE) p
    WHERE r.id = p.id AND r.status IN ('queued', 'running') AND r.attempt < ${maxAttempts}
    RETURNING r.id, r.suite_run_id, p.prev_status, r.attempt`;
  const row = rows[0];
  if (!row) return null;
  if (row.suite_run_id && row.prev_status !== 'running') await moveSuiteCounter(tx, row.suite_run_id, row.prev_status, 'running');
  return { attempt: row.attempt, prevStatus: row.prev_status };
}

/** Moves one child of a suite run from one counter to another and re-derives the aggregate status. */
async function moveSuiteCounter(tx: DbTx, suiteRunId: string, from: RunStatus, to: RunStatus): Promise<void> {
  const fromCol = COUNTER_COLUMN[from];
  const toCol = COUNTER_COLUMN[to];
  // Column names come from the fixed table above, never from input.
  const rows = await tx.$queryRawUnsafe<Array<Record<string, number>>>(
    `UPDATE suite_runs SET ${fromCol} = ${fromCol} - 1, ${toCol} = ${toCol} + 1,
       started_at = COALESCE(started_at, CASE WHEN $2 THEN now() END)
     WHERE id = $1
     RETURNING total_count, queued_count, running_count, passed_count, failed_count, error_count, skipped_count`,
    suiteRunId,
    from === 'queued',
  );
  const c = rows[0];
  if (!c) return;
  const counts: SuiteCounts = {
    total: c.total_count!, queued: c.queued_count!, running: c.running_count!, passed: c.passed_count!,
    failed: c.failed_count!, error: c.error_count!, skipped: c.skipped_count!,
  };
  const status = deriveSuiteStatus(counts);
  const terminal = status !== 'queued' && status !== 'running';
  await tx.$executeRaw`
    UPDATE suite_runs SET status = ${status}::"RunStatus", finished_at = CASE WHEN ${terminal} THEN now() ELSE NULL END
    WHERE id = ${suiteRunId}`;
}
