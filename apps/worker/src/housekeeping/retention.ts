import type { ArtifactStore } from '@testrun/core/artifact-store';
import { Prisma, type Db } from '@testrun/core/db';
import { trimBaselineHistory } from '@testrun/core/visual';
import { collectBaselineImages } from './baseline-images';

/** Days runs and artifacts are kept where a workspace sets none of its own (see config.ts). */
export type RetentionDays = { artifactDays: number; runDays: number };

/** Options of {@link purgeExpired}. */
export type RetentionOptions = {
  db: Db;
  store: ArtifactStore;
  /** ARTIFACT_RETENTION_DAYS and RUN_RETENTION_DAYS; a workspace's own columns win. */
  defaults: RetentionDays;
  /** Runs per batch: each statement deletes the rows of at most this many runs. Default 500. */
  batchSize?: number;
  /** No new batch starts after this much time in one call (one batch always runs), so a reconciler pass stays short. Default 5000 ms. */
  budgetMs?: number;
  /** How long a baseline image must have been left unwritten, and its candidate noted, before it is deleted (baseline-images.ts). Default one hour. */
  imageGraceMs?: number;
};

/** What one {@link purgeExpired} call deleted. */
export type RetentionReport = {
  /** Runs deleted with their steps, artifacts and files. */
  runs: number;
  /** Suite runs deleted because none of their runs was left. */
  suiteRuns: number;
  /** Runs whose artifact files and rows were deleted (the runs themselves are kept). */
  artifactRuns: number;
  /** baseline_history entries deleted: replaced longer ago than the run retention. */
  historyEntries: number;
  /** Baseline images deleted from the store: no row referred to them any more. */
  images: number;
  /** False when the budget ran out with more left to delete: the next call goes on. */
  done: boolean;
};

type Expired = { id: string; workspace_id: string };
type ExpiredRun = Expired & { suite_run_id: string | null };

/** deletePrefix calls at once: enough to hide an object store's latency, few enough not to flood it. */
const FILE_CONCURRENCY = 16;

/**
 * Deletes what outlived its retention, in batches of at most `batchSize` runs, until nothing is
 * left or the time budget is spent (docs/OPERATIONS.md):
 * - runs created more than RUN_RETENTION_DAYS (or the workspace's `run_retention_days`) ago and
 *   finished: their files, then (in one short transaction) the runs, whose steps and artifact rows
 *   go by cascade, and the suite runs of theirs that have no run left;
 * - artifacts created more than ARTIFACT_RETENTION_DAYS (or `artifact_retention_days`) ago: all the
 *   files of their runs, then the artifact rows (the run's own, and those of the setup tests its
 *   sandbox ran), and the run is marked `artifacts_expired_at` so the view shows "expired" where
 *   they were. A purged run's setup test files go with its other files, their rows by cascade.
 * - baseline_history entries replaced more than the run retention ago (docs/VISUAL.md, "Storage");
 * - baseline images no baselines, baseline_history or visual_changes row refers to any more: those
 *   of a purged run's visual changes, of trimmed history, of replaced images (baseline-images.ts).
 * Files always go before rows: a crash between the two leaves rows that the next batch finds and
 * deletes again (deleting files that are gone is no error), never files no row leads to. Each
 * statement is small and uses the (workspace_id, created_at) indexes, and nothing here locks a row
 * that creating a run needs, so POST /runs never waits on a purge (docs/BENCHMARKS.md "retention").
 */
export async function purgeExpired(options: RetentionOptions): Promise<RetentionReport> {
  const batchSize = options.batchSize ?? 500;
  const deadline = performance.now() + (options.budgetMs ?? 5_000);
  const report: RetentionReport = { runs: 0, suiteRuns: 0, artifactRuns: 0, historyEntries: 0, images: 0, done: false };
  const spent = () => performance.now() >= deadline;
  // Runs first: purging a run takes its artifacts with it, which would be wasted work the other way round.
  for (;;) {
    const runs = await expiredRuns(options, batchSize);
    if (runs.length === 0) break;
    const { suiteRuns } = await purgeRuns(options, runs);
    report.runs += runs.length;
    report.suiteRuns += suiteRuns;
    if (spent()) return report;
  }
  for (;;) {
    const runs = await runsWithExpiredArtifacts(options, batchSize);
    if (runs.length === 0) break;
    await expireArtifacts(options, runs);
    report.artifactRuns += runs.length;
    if (spent()) return report;
  }
  // History, then images: the history's images become candidates as it goes.
  for (;;) {
    const trimmed = await trimBaselineHistory(options.db, options.defaults.runDays, batchSize);
    report.historyEntries += trimmed;
    if (trimmed === 0) break;
    if (spent()) return report;
  }
  const { db, store, imageGraceMs: graceMs } = options;
  const images = await collectBaselineImages({ db, store, graceMs, deadline });
  report.images = images.deleted;
  report.done = images.done;
  return report;
}

/** The oldest finished runs past their workspace's retention, a few from each workspace's end of the index. */
async function expiredRuns({ db, defaults }: RetentionOptions, limit: number): Promise<ExpiredRun[]> {
  return db.$queryRaw<ExpiredRun[]>`
    SELECT r.id, r.workspace_id, r.suite_run_id FROM workspaces w
    CROSS JOIN LATERAL (
      SELECT id, workspace_id, suite_run_id FROM runs
      WHERE workspace_id = w.id
        AND created_at < now() - make_interval(days => COALESCE(w.run_retention_days, ${defaults.runDays}::int))
        AND status NOT IN ('queued', 'running')
      ORDER BY created_at LIMIT ${limit}) r
    LIMIT ${limit}`;
}

/**
 * Runs that have an artifact past their workspace's artifact retention: one of their own, or one of
 * a setup test their sandbox ran (setup_artifacts, whose files are under the run's prefix).
 */
async function runsWithExpiredArtifacts({ db, defaults }: RetentionOptions, limit: number): Promise<Expired[]> {
  const expired = (table: 'artifacts' | 'setup_artifacts') => Prisma.sql`
      (SELECT a.run_id, a.workspace_id FROM workspaces w
      CROSS JOIN LATERAL (
        SELECT run_id, workspace_id FROM ${Prisma.raw(table)}
        WHERE workspace_id = w.id
          AND created_at < now() - make_interval(days => COALESCE(w.artifact_retention_days, ${defaults.artifactDays}::int))
        ORDER BY created_at LIMIT ${limit}) a
      LIMIT ${limit})`;
  return db.$queryRaw<Expired[]>`
    SELECT DISTINCT run_id AS id, workspace_id FROM (
      ${expired('artifacts')} UNION ALL ${expired('setup_artifacts')}) expired
    LIMIT ${limit}`;
}

/** Every file of the runs (a run's keys share the `<workspace>/<run>` prefix, see artifactKey). */
async function deleteFiles(store: ArtifactStore, runs: readonly Expired[]): Promise<void> {
  let next = 0;
  const lane = async () => {
    while (next < runs.length) {
      const run = runs[next++];
      if (run) await store.deletePrefix(`${run.workspace_id}/${run.id}`);
    }
  };
  await Promise.all(Array.from({ length: Math.min(FILE_CONCURRENCY, runs.length) }, lane));
}

async function purgeRuns({ db, store }: RetentionOptions, runs: readonly ExpiredRun[]): Promise<{ suiteRuns: number }> {
  await deleteFiles(store, runs);
  const ids = runs.map((r) => r.id);
  const suiteRunIds = [...new Set(runs.flatMap((r) => (r.suite_run_id ? [r.suite_run_id] : [])))];
  // One transaction, so a suite run whose last runs go is deleted with them: a crash cannot leave a
  // suite run that no expired run leads back to.
  const [, suiteRuns] = await db.$transaction([
    db.$executeRaw`DELETE FROM runs WHERE id = ANY(${ids}::text[])`,
    db.$executeRaw`
      DELETE FROM suite_runs s WHERE s.id = ANY(${suiteRunIds}::text[])
        AND NOT EXISTS (SELECT 1 FROM runs r WHERE r.suite_run_id = s.id)`,
  ]);
  return { suiteRuns };
}

async function expireArtifacts({ db, store }: RetentionOptions, runs: readonly Expired[]): Promise<void> {
  await deleteFiles(store, runs);
  const ids = runs.map((r) => r.id);
  await db.$transaction([
    db.$executeRaw`DELETE FROM artifacts WHERE run_id = ANY(${ids}::text[])`,
    db.$executeRaw`DELETE FROM setup_artifacts WHERE run_id = ANY(${ids}::text[])`,
    db.$executeRaw`UPDATE runs SET artifacts_expired_at = now() WHERE id = ANY(${ids}::text[]) AND artifacts_expired_at IS NULL`,
  ]);
}
