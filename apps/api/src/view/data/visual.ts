import { readSql, type Db } from '@testrun/core/db';
import type { ViewVisualChange, ViewVisualSummary } from '../model';

// What runs found of their snapshots against the baselines (docs/VIEW.md, "Visual changes"): a
// run page reads its run's changes; a suite page one grouped count over its suite run's runs.

/** A run's changes by path, through visual_changes' (run_id, path) index. */
const RUN_CHANGES_SQL = `SELECT v.id, v.name, v.path, v.kind, v.approved_at AS "approvedAt",
  v.approved_by_key_name AS "approvedBy"
  FROM visual_changes v WHERE v.run_id = $1 ORDER BY v.path`;

/** The most snapshot names a suite page lists for one test; its counts count them all. */
const SUMMARY_NAMES = 10;

/**
 * How many changes each run of suite run `$1` found, awaiting approval (changed, new) and approved,
 * with the first names by path: one grouped count over the suite run's runs (visual_changes'
 * (run_id, path) index), as the API's suite run counts its runs' attachments.
 */
const SUITE_SUMMARY_SQL = `SELECT v.run_id AS "runId",
  count(*) FILTER (WHERE v.kind = 'changed' AND v.approved_at IS NULL)::int AS changed,
  count(*) FILTER (WHERE v.kind = 'new' AND v.approved_at IS NULL)::int AS "new",
  count(*) FILTER (WHERE v.approved_at IS NOT NULL)::int AS approved,
  (array_agg(v.name ORDER BY v.path))[1:${SUMMARY_NAMES}] AS names
  FROM visual_changes v JOIN runs c ON c.id = v.run_id
  WHERE c.suite_run_id = $1 GROUP BY v.run_id`;

type ChangeRow = Omit<ViewVisualChange, 'kind'> & { kind: string };

/** A row's kind, checked: a value outside the closed set is a bug, not something to draw. */
function toChange({ kind, ...row }: ChangeRow): ViewVisualChange {
  if (kind !== 'new' && kind !== 'changed') throw new Error(`visual change kind "${kind}" is not new or changed`);
  return { ...row, kind };
}

/** What the run found of its snapshots, by path; empty when nothing. */
export async function readVisualChanges(db: Db, runId: string): Promise<ViewVisualChange[]> {
  const rows = await readSql<ChangeRow>(db, 'view_visual_changes', RUN_CHANGES_SQL, [runId]);
  return rows.map(toChange);
}

/** The counts of each run of the suite run that found something, by run id. */
export async function readVisualSummary(db: Db, suiteRunId: string): Promise<Map<string, ViewVisualSummary>> {
  const rows = await readSql<ViewVisualSummary & { runId: string }>(db, 'view_visual_summary', SUITE_SUMMARY_SQL, [
    suiteRunId,
  ]);
  return new Map(rows.map(({ runId, ...summary }) => [runId, summary]));
}
