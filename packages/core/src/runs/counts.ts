// What the plan limits count of a workspace's runs, and what a waiting GET watches of a run.
import { readSql, type Db, type DbTx } from '../db';

/**
 * The workspace's runs queued or running now, and those created this calendar month (UTC) that
 * were not skipped: what the plan's "active runs" and "monthly runs" limits count.
 */
export async function countWorkspaceRuns(tx: DbTx, workspaceId: string): Promise<{ active: number; monthly: number }> {
  const [counts] = await tx.$queryRaw<Array<{ active: number; monthly: number }>>`
    SELECT
      (SELECT count(*)::int FROM runs WHERE workspace_id = ${workspaceId} AND status IN ('queued', 'running')) AS active,
      (SELECT count(*)::int FROM runs WHERE workspace_id = ${workspaceId} AND status <> 'skipped'
         AND created_at >= date_trunc('month', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC') AS monthly`;
  if (!counts) throw new Error('the run counts query returned no row');
  return counts;
}

/** A run's or suite run's fingerprint: it changes whenever what a GET of it shows of its progress changes. */
export type Fingerprint = { kind: 'run' | 'suite-run'; id: string; fingerprint: string };

/** The fingerprints of the runs and suite runs of the given ids (ids that do not exist are left out). */
export async function readFingerprints(
  db: Db,
  runIds: readonly string[],
  suiteRunIds: readonly string[],
): Promise<Fingerprint[]> {
  return readSql<Fingerprint>(
    db,
    'long_poll_fingerprints',
    `SELECT 'run' AS kind, id, status::text AS fingerprint FROM runs WHERE id = ANY($1::text[])
        UNION ALL
        SELECT 'suite-run', id, concat_ws('|', status::text, queued_count, running_count, passed_count, failed_count,
          error_count, skipped_count, (SELECT COALESCE(sum(sr.executions), 0) FROM setup_results sr
            WHERE sr.suite_run_id = suite_runs.id)) FROM suite_runs WHERE id = ANY($2::text[])`,
    [[...runIds], [...suiteRunIds]],
  );
}
