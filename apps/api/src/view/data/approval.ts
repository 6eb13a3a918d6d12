import type { ArtifactStore } from '@testrun/core/artifact-store';
import { readSql, type Db } from '@testrun/core/db';
import type { LinkSigner, ViewRun } from '../model';
import { withPreviews } from './previews';
import { loadRun } from './queries';

// What an approval page reads (docs/VISUAL.md, "Approve in the view"): its subject's workspace and
// title, and the runs that found visual changes, each loaded as its run page loads it (images
// under the run's view links).

/** The most runs an approval page shows; beyond them, it says how many more to approve with the CLI. */
const APPROVAL_PAGE_RUNS = 100;

/** A subject's workspace and what the page calls it, or null when it does not exist. */
export type ApprovalSubjectRow = { workspaceId: string; title: string };

const RUN_SUBJECT_SQL = `SELECT workspace_id AS "workspaceId", test_name AS title FROM runs WHERE id = $1`;
const SUITE_SUBJECT_SQL = `SELECT r.workspace_id AS "workspaceId", s.name AS title
  FROM suite_runs r JOIN suites s ON s.id = r.suite_id WHERE r.id = $1`;

/** The runs of a run or suite run that found changes: those awaiting approval first, then by position. */
const changedRunsSql = (by: 'id' | 'suite_run_id') => `SELECT r.id FROM runs r
  JOIN visual_changes v ON v.run_id = r.id
  WHERE r.${by} = $1
  GROUP BY r.id, r.position
  ORDER BY bool_or(v.approved_at IS NULL) DESC, r.position, r.id`;

export async function loadApprovalSubject(
  db: Db,
  subject: 'run' | 'suite-run',
  id: string,
): Promise<ApprovalSubjectRow | null> {
  const sql = subject === 'run' ? RUN_SUBJECT_SQL : SUITE_SUBJECT_SQL;
  const [row] = await readSql<ApprovalSubjectRow>(db, `approval_subject_${subject}`, sql, [id]);
  return row ?? null;
}

/** The runs with changes, loaded (at most APPROVAL_PAGE_RUNS), and how many more there are. */
export async function loadApprovalRuns(
  deps: { db: Db; store: ArtifactStore },
  sign: LinkSigner,
  target: { subject: 'run' | 'suite-run'; id: string },
): Promise<{ runs: ViewRun[]; leftOff: number }> {
  const by = target.subject === 'run' ? 'id' : 'suite_run_id';
  const ids = await readSql<{ id: string }>(deps.db, `approval_changed_runs_${by}`, changedRunsSql(by), [target.id]);
  const shown = ids.slice(0, APPROVAL_PAGE_RUNS);
  const runs: ViewRun[] = [];
  // A few at a time: each run is several queries, and the pool is shared with every other page.
  for (let i = 0; i < shown.length; i += 8) {
    const loaded = await Promise.all(
      shown.slice(i, i + 8).map(async (row) => {
        const run = await loadRun(deps.db, sign, row.id);
        return run && withPreviews(deps.db, deps.store, run);
      }),
    );
    runs.push(...loaded.filter((r): r is ViewRun => r !== null));
  }
  return { runs, leftOff: ids.length - shown.length };
}
