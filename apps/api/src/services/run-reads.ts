import {
  isRunErrorCode,
  readEvidencePolicy,
  type Run,
  type RunOutcomeCode,
  type RunStatus,
  type SkipReason,
} from '@testrun/contracts';
import { readSql, type Db, type ViewLinkState } from '@testrun/core';
import { ApiError } from '../errors';

/** A run's row as {@link RUN_COLUMNS} selects it (from `runs r` joined to its suite run `s`). */
export type RunRow = {
  id: string;
  status: RunStatus;
  evidence: unknown;
  result_summary: string;
  outcome_code: RunOutcomeCode | null;
  outcome_message: string | null;
  outcome_step: number | null;
  skip_reason: SkipReason | null;
  test_id: string;
  test_name: string;
  suite_run_id: string | null;
  created_at: Date;
  started_at: Date | null;
  finished_at: Date | null;
  duration_ms: number | null;
  attempt: number;
  view_token_version: number | null;
};

/** What a Run is made of, for `SELECT … FROM runs r LEFT JOIN suite_runs s ON s.id = r.suite_run_id`. */
export const RUN_COLUMNS = `r.id, r.status::text AS status, r.evidence, r.result_summary, r.outcome_code::text AS outcome_code,
      r.outcome_message, r.outcome_step, r.skip_reason::text AS skip_reason, r.test_id, r.test_name, r.suite_run_id,
      r.created_at, r.started_at, r.finished_at, r.duration_ms, r.attempt, s.view_token_version`;

/** A run's row as the contract's Run. */
export function toRun(row: RunRow): Run {
  return {
    id: row.id,
    status: row.status,
    result_summary: row.result_summary,
    error:
      row.status === 'error'
        ? {
            // The database keeps failure codes off `error` runs (runs_outcome_code_matches_status).
            code: isRunErrorCode(row.outcome_code) ? row.outcome_code : 'internal_error',
            message: row.outcome_message ?? row.result_summary,
            step: row.outcome_step,
          }
        : null,
    skip_reason: row.status === 'skipped' ? row.skip_reason : null,
    // Runs created before evidence policies existed have none to show.
    ...(row.evidence === null ? {} : { evidence: readEvidencePolicy(row.evidence) }),
    test_id: row.test_id,
    test_name: row.test_name,
    suite_run_id: row.suite_run_id,
    created_at: row.created_at.toISOString(),
    started_at: row.started_at?.toISOString() ?? null,
    finished_at: row.finished_at?.toISOString() ?? null,
    duration_ms: row.finished_at ? row.duration_ms : null,
    // A claim (`attempt`) taken again after a worker was lost is the same attempt of the test.
    attempts: row.started_at ? 1 : 0,
  };
}

/** One run as the contract's Run, with the state its view link is signed with. */
export type RunRead = { run: Run; link: ViewLinkState };

/**
 * One run of the workspace as the contract's Run, or 404 (the same for foreign and unknown ids),
 * with its view link's state, in one statement: this is what clients poll.
 */
export async function getRun(db: Db, workspaceId: string, runId: string): Promise<RunRead> {
  const rows = await readSql<RunRow>(
    db,
    'run_by_id',
    `SELECT ${RUN_COLUMNS}
    FROM runs r LEFT JOIN suite_runs s ON s.id = r.suite_run_id
    WHERE r.id = $1 AND r.workspace_id = $2`,
    [runId, workspaceId],
  );
  const row = rows[0];
  if (!row) throw new ApiError('not_found', `No run "${runId}" in this workspace.`);
  return { run: toRun(row), link: { createdAt: row.created_at, version: row.view_token_version ?? 0 } };
}
