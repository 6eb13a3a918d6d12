import type { RunStatus, SkipReason, SuiteRun, SuiteRunStatus, TestEntry } from '@testrun/contracts';
import { readSql, suiteRunViewUrl, viewLinkTerms, type Db, type DerivedKeys, type ViewLinkConfig } from '@testrun/core';
import { ApiError } from '../errors';

type SuiteRunRow = {
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
  /** The children in position order as [id, test name, status, skip reason, duration] (a JSON array). */
  tests: Array<[string, string, RunStatus, SkipReason | null, number | null]>;
};

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
  const rows = await readSql<SuiteRunRow>(
    db,
    'suite_run_by_id',
    `SELECT s.id, s.status::text AS status, s.total_count, s.passed_count, s.failed_count, s.error_count,
      s.skipped_count, s.created_at, s.started_at, s.finished_at, s.view_token_version,
      COALESCE((SELECT json_agg(json_build_array(r.id, r.test_name, r.status, r.skip_reason,
          CASE WHEN r.finished_at IS NULL THEN NULL ELSE r.duration_ms END) ORDER BY r.position)
        FROM runs r WHERE r.suite_run_id = s.id), '[]'::json) AS tests
    FROM suite_runs s
    WHERE s.id = $1 AND s.workspace_id = $2`,
    [suiteRunId, workspaceId],
  );
  const suiteRun = rows[0];
  if (!suiteRun) throw new ApiError('not_found', `No suite run "${suiteRunId}" in this workspace.`);
  return {
    id: suiteRun.id,
    status: suiteRun.status,
    total_count: suiteRun.total_count,
    passed_count: suiteRun.passed_count,
    failed_count: suiteRun.failed_count,
    error_count: suiteRun.error_count,
    skipped_count: suiteRun.skipped_count,
    suiteRunUrl: suiteRunViewUrl(
      links.publicBaseUrl,
      keys.view,
      suiteRun.id,
      viewLinkTerms({ createdAt: suiteRun.created_at, version: suiteRun.view_token_version }, links.viewLinkTtlDays),
    ),
    tests: suiteRun.tests.map(([runId, name, status, skipReason, durationMs]): TestEntry => ({
      runId,
      name,
      status,
      skipReason: status === 'skipped' ? skipReason : null,
      durationMs,
    })),
    created_at: suiteRun.created_at.toISOString(),
    started_at: suiteRun.started_at?.toISOString() ?? null,
    finished_at: suiteRun.finished_at?.toISOString() ?? null,
    duration_ms:
      suiteRun.started_at && suiteRun.finished_at
        ? suiteRun.finished_at.getTime() - suiteRun.started_at.getTime()
        : null,
  };
}
