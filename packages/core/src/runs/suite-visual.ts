import type { SuiteRun } from '@testrun/contracts';

// A suite run's visual changes not yet approved, by kind (docs/VISUAL.md): what a client or a
// `suite_run.finished` receiver needs to know that someone should look, without reading every run.

/**
 * SQL, for `SELECT … FROM suite_runs s`: [new not approved, changed not approved, all] of the visual
 * changes of its runs, through the runs' (suite_run_id, position) and visual_changes' (run_id, path)
 * indexes.
 */
export const SUITE_VISUAL_COUNTS = `(SELECT json_build_array(
        count(*) FILTER (WHERE v.kind = 'new' AND v.approved_at IS NULL),
        count(*) FILTER (WHERE v.kind = 'changed' AND v.approved_at IS NULL), count(*))
      FROM runs vr JOIN visual_changes v ON v.run_id = vr.id WHERE vr.suite_run_id = s.id) AS visual_counts`;

/** A suite run's column of {@link SUITE_VISUAL_COUNTS}. */
export type SuiteVisualRow = { visual_counts: [number, number, number] };

/** The suite run's visual counters; none when its runs found no visual change. */
export function suiteVisualOf(row: SuiteVisualRow): Pick<SuiteRun, 'visual_new_count' | 'visual_changed_count'> {
  const [unapprovedNew, unapprovedChanged, all] = row.visual_counts;
  if (all === 0) return {};
  return { visual_new_count: unapprovedNew, visual_changed_count: unapprovedChanged };
}
