import type { RunStatus, SkipReason, SuiteRun, SuiteRunStatus, TestEntry } from '@testrun/contracts';
import { readSql, suiteRunViewUrl, viewLinkTerms, type Db, type DerivedKeys, type ViewLinkConfig } from '@testrun/core';
import { ApiError } from '../errors';

/** A suite run's row as {@link SUITE_RUN_COLUMNS} selects it (from `suite_runs s`). */
export type SuiteRunRow = {
  id: string;
  status: SuiteRunStatus;
  total_count: number;
  passed_count: number;
  failed_count: number;
  error_count: number;
  skipped_count: number;
  created_at: Date;
  started_at: Date | null;
  finished_at: Date | null;
  view_token_version: number;
};

/** What a suite run is made of, its tests aside, for `SELECT … FROM suite_runs s`. */
export const SUITE_RUN_COLUMNS = `s.id, s.status::text AS status, s.total_count, s.passed_count, s.failed_count,
      s.error_count, s.skipped_count, s.created_at, s.started_at, s.finished_at, s.view_token_version`;

/** A suite run's row as the contract's SuiteRun without its tests, with its signed view link. */
export function toSuiteRunSummary(keys: DerivedKeys, links: ViewLinkConfig, row: SuiteRunRow): Omit<SuiteRun, 'tests'> {
  return {
    id: row.id,
    status: row.status,
    total_count: row.total_count,
    passed_count: row.passed_count,
    failed_count: row.failed_count,
    error_count: row.error_count,
    skipped_count: row.skipped_count,
    suiteRunUrl: suiteRunViewUrl(
      links.publicBaseUrl,
      keys.view,
      row.id,
      viewLinkTerms({ createdAt: row.created_at, version: row.view_token_version }, links.viewLinkTtlDays),
    ),
    created_at: row.created_at.toISOString(),
    started_at: row.started_at?.toISOString() ?? null,
    finished_at: row.finished_at?.toISOString() ?? null,
    duration_ms: row.started_at && row.finished_at ? row.finished_at.getTime() - row.started_at.getTime() : null,
  };
}

/**
 * One suite run of the workspace with its children in position order, or 404, in one statement
 * (the children come as one JSON array, built by Postgres from the (suite_run_id, position) index).
 */
export async function getSuiteRun(
  db: Db,
  keys: DerivedKeys,
  links: ViewLinkConfig,
  workspaceId: string,
  suiteRunId: string,
): Promise<SuiteRun> {
  type Row = SuiteRunRow & {
    /** The children in position order as [id, test name, status, skip reason, duration] (a JSON array). */
    tests: Array<[string, string, RunStatus, SkipReason | null, number | null]>;
  };
  const rows = await readSql<Row>(
    db,
    'suite_run_by_id',
    `SELECT ${SUITE_RUN_COLUMNS},
      COALESCE((SELECT json_agg(json_build_array(r.id, r.test_name, r.status, r.skip_reason,
          CASE WHEN r.finished_at IS NULL THEN NULL ELSE r.duration_ms END) ORDER BY r.position)
        FROM runs r WHERE r.suite_run_id = s.id), '[]'::json) AS tests
    FROM suite_runs s
    WHERE s.id = $1 AND s.workspace_id = $2`,
    [suiteRunId, workspaceId],
  );
  const row = rows[0];
  if (!row) throw new ApiError('not_found', `No suite run "${suiteRunId}" in this workspace.`);
  return {
    ...toSuiteRunSummary(keys, links, row),
    tests: row.tests.map(([runId, name, status, skipReason, durationMs]): TestEntry => ({
      runId,
      name,
      status,
      skipReason: status === 'skipped' ? skipReason : null,
      durationMs,
    })),
  };
}
