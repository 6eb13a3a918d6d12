import { readSql, type Db } from '@testrun/core/db';
import type { LinkSigner, ViewHistoryMark, ViewRun } from '../model';
import { scopeSql, type RunScope } from './scope';

/** How many outcomes of a test its history shows. */
const HISTORY_LENGTH = 20;

type HistoryRow = {
  for_id: string;
  id: string;
  status: ViewHistoryMark['status'];
  retry: number;
  created_at: Date;
  finished_at: Date | null;
  linkable: boolean;
};

/**
 * For each run given, the last HISTORY_LENGTH outcomes (passed, failed, error) of its test up to and
 * including the run itself, newest first: the runs of the same test row (so of the same workspace),
 * whichever suite and request created them (a Playwright test that several suites select is one test,
 * with one history). One statement for all the
 * runs: a LATERAL subquery per run walks the index on runs(test_id, created_at, id) backwards from
 * the run and stops after HISTORY_LENGTH rows. A test row belongs to one workspace, so its runs
 * are that workspace's; the workspace is checked outside the subquery all the same, where it cannot
 * tempt the planner onto the workspace's index (with stale statistics it did, and read every run of
 * the workspace). `linkable` says whether a link signed with the
 * page's terms opens the run: its link version (its suite run's, its own outside a suite run) must be
 * the one of the run the page was opened for, so a revoked suite run stays closed.
 */
export function historySql(where: string): string {
  return `
  SELECT cur.id AS for_id, h.id, h.status, h.retry, h.created_at, h.finished_at,
    h.version = COALESCE(csr.view_token_version, cur.view_token_version) AS linkable
  FROM runs cur
  LEFT JOIN suite_runs csr ON csr.id = cur.suite_run_id
  CROSS JOIN LATERAL (
    SELECT r.id, r.workspace_id, r.status::text AS status, r.retry, r.created_at, r.finished_at,
      COALESCE((SELECT sr.view_token_version FROM suite_runs sr WHERE sr.id = r.suite_run_id), r.view_token_version) AS version
    FROM runs r
    WHERE r.test_id = cur.test_id
      AND r.status IN ('passed', 'failed', 'error')
      AND (r.created_at, r.id) <= (cur.created_at, cur.id)
    ORDER BY r.created_at DESC, r.id DESC
    LIMIT ${HISTORY_LENGTH}
  ) h
  WHERE ${where} AND h.workspace_id = cur.workspace_id`;
}

/** The history rows of the scope's runs (a suite page reads those it shows open; a run page, its run). */
export async function readHistory(db: Db, scope: RunScope): Promise<HistoryRow[]> {
  if ('runIds' in scope && scope.runIds.length === 0) return [];
  const { where, name, param } = scopeSql(scope, 'cur');
  return readSql<HistoryRow>(db, `view_test_history_${name}`, historySql(where), [param]);
}

/** Sets `history` on each run given from its rows, the marks' links signed by `sign` (the page's terms). */
export function attachHistory(sign: LinkSigner, runs: ViewRun[], rows: HistoryRow[]): void {
  const byRun = new Map<string, ViewHistoryMark[]>(runs.map((r) => [r.id, []]));
  for (const row of rows)
    byRun.get(row.for_id)?.push({
      id: row.id,
      token: row.linkable ? sign('run', row.id) : null,
      status: row.status,
      flaky: row.status === 'passed' && row.retry > 0,
      at: row.finished_at ?? row.created_at,
      createdAt: row.created_at,
      current: row.id === row.for_id,
    });
  for (const run of runs) {
    const marks = byRun.get(run.id) ?? [];
    // Newest first from the database; the strip reads oldest to newest.
    marks.sort((a, b) => a.createdAt.getTime() - b.createdAt.getTime() || (a.id < b.id ? -1 : 1));
    run.history = marks;
  }
}
