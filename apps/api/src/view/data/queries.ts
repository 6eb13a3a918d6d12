// Every read the view's pages make: a page's reads (runs, open tests' details, histories) go out at
// once through the pool. The rows of runs and their details are read by details.ts.
import { formatDuration, isTerminalRunStatus, type RunStatus } from '@testrun/contracts';
import { readSql, type Db } from '@testrun/core/db';
import { readFailedSetup, readSetupTestsWithSteps } from '@testrun/core/runs';
import { isFlaky, searchText, showsDetailsInline } from '../filters';
import type { LinkSigner, LiveStatus, ViewCounts, ViewDeployment, ViewRun, ViewSuiteRun } from '../model';
import { attachDetails, detailsOf, ofAttempt, readDetails, RUN_SELECT, toViewRun, type RunRow } from './details';
import { queueWaitText, type Queued } from '../queue-wait-text';
import { attachHistory, readHistory } from './history';
import { readVisualChanges, readVisualSummary } from './visual';

/** The suite run's counters, as stored beside its status. */
const COUNT_COLUMNS = {
  status: true,
  totalCount: true,
  queuedCount: true,
  runningCount: true,
  passedCount: true,
  failedCount: true,
  errorCount: true,
  skippedCount: true,
} as const;

type CountRow = { [K in Exclude<keyof typeof COUNT_COLUMNS, 'status'>]: number };

function countsOf(row: CountRow, runs: ReadonlyArray<{ status: RunStatus; retry: number }>): ViewCounts {
  return {
    flaky: runs.filter(isFlaky).length,
    total: row.totalCount,
    queued: row.queuedCount,
    running: row.runningCount,
    passed: row.passedCount,
    failed: row.failedCount,
    error: row.errorCount,
    skipped: row.skippedCount,
  };
}

export async function loadSuiteRun(db: Db, sign: LinkSigner, suiteRunId: string): Promise<ViewSuiteRun | null> {
  // The suite run, its runs, and the details and history of those it shows open, read at once.
  const scope = { openOfSuiteRun: suiteRunId };
  const [suiteRun, rows, details, history, setupTests, visualChanges] = await Promise.all([
    db.suiteRun.findUnique({
      where: { id: suiteRunId },
      select: {
        ...COUNT_COLUMNS,
        id: true,
        createdAt: true,
        startedAt: true,
        finishedAt: true,
        suite: { select: { name: true, slug: true, project: { select: { name: true, slug: true } } } },
        queuedAhead: true,
        preview: true,
        deployment: { select: { version: true, warnings: true, activatedAt: true } },
      },
    }),
    readSql<RunRow>(db, 'view_suite_runs', `${RUN_SELECT} WHERE suite_run_id = $1 ORDER BY position`, [suiteRunId]),
    readDetails(db, scope),
    readHistory(db, scope),
    readSetupTestsWithSteps(db, { suiteRunId }),
    readVisualSummary(db, suiteRunId),
  ]);
  if (!suiteRun) return null;
  const runs = rows.map((row) => toViewRun(sign, row));
  const open = runs.filter(showsDetailsInline);
  attachDetails(open, details);
  attachHistory(sign, open, history);
  return {
    id: suiteRun.id,
    token: sign('suite-run', suiteRun.id),
    suiteName: suiteRun.suite.name,
    suiteSlug: suiteRun.suite.slug,
    projectName: suiteRun.suite.project.name,
    projectSlug: suiteRun.suite.project.slug,
    status: suiteRun.status,
    counts: countsOf(suiteRun, runs),
    createdAt: suiteRun.createdAt,
    startedAt: suiteRun.startedAt,
    finishedAt: suiteRun.finishedAt,
    runs,
    queuedAhead: suiteRun.queuedAhead,
    ...(suiteRun.deployment ? { deployment: viewDeployment(suiteRun.deployment, suiteRun.preview) } : {}),
    ...(setupTests.length > 0 ? { setupTests } : {}),
    ...(visualChanges.size > 0 ? { visualChanges } : {}),
  };
}

/**
 * A deployment row's version and warnings (a JSON array of strings, or null for step tests only),
 * and whether the suite run ran it as a preview: as recorded when it was enqueued, else (older
 * rows) only when the version was never activated, the one case known for certain after the fact.
 */
function viewDeployment(
  row: { version: number; warnings: unknown; activatedAt: Date | null },
  preview: boolean | null,
): ViewDeployment {
  const warnings = Array.isArray(row.warnings) ? row.warnings.filter((w): w is string => typeof w === 'string') : [];
  return { version: row.version, warnings, preview: preview ?? row.activatedAt === null };
}

/** The version a run executes, its warnings and whether it ran as a preview (see viewDeployment). */
const RUN_DEPLOYMENT_SQL = `SELECT d.version, COALESCE(d.warnings, '[]'::jsonb) AS warnings,
  COALESCE(r.preview, d.activated_at IS NULL) AS preview
  FROM runs r JOIN deployments d ON d.id = r.deployment_id WHERE r.id = $1`;

export async function loadRun(db: Db, sign: LinkSigner, runId: string): Promise<ViewRun | null> {
  const [row] = await readSql<RunRow>(db, 'view_run', `${RUN_SELECT} WHERE id = $1`, [runId]);
  if (!row) return null;
  const run = toViewRun(sign, row);
  // A retried run's page shows every attempt: their rows are read at once and split by attempt.
  const retried = run.retry > 0;
  const [details, history, attempts, [deployment], visualChanges] = await Promise.all([
    readDetails(db, { runIds: run.attempt > 0 ? [run.id] : [] }, retried ? 'every' : 'current'),
    readHistory(db, { runIds: [run.id] }),
    retried ? db.runAttempt.findMany({ where: { runId }, orderBy: { retry: 'asc' } }) : [],
    readSql<ViewDeployment>(db, 'view_run_deployment', RUN_DEPLOYMENT_SQL, [runId]),
    readVisualChanges(db, runId),
  ]);
  attachDetails([run], retried ? ofAttempt(details, run.attempt) : details);
  attachHistory(sign, [run], history);
  if (deployment) run.deployment = deployment;
  if (visualChanges.length > 0) run.visualChanges = visualChanges;
  await attachFailedSetup(db, sign, run);
  // Outside a suite run, the run's page shows the setup tests its test depended on.
  if (run.suiteRunId === null) {
    const setupTests = await readSetupTestsWithSteps(db, { runId: run.id });
    if (setupTests.length > 0) run.setupTests = setupTests;
  }
  run.earlierAttempts = attempts.map((a) => ({
    retry: a.retry,
    status: a.status,
    resultSummary: a.resultSummary,
    outcomeCode: a.outcomeCode,
    outcomeMessage: a.outcomeMessage,
    outcomeStep: a.outcomeStep,
    startedAt: a.startedAt,
    finishedAt: a.finishedAt,
    durationMs: a.durationMs,
    ...detailsOf(ofAttempt(details, a.attempt)),
  }));
  return run;
}

/** A setup_failed run: the setup test it ended on, linked on its suite run's page (else on its own). */
async function attachFailedSetup(db: Db, sign: LinkSigner, run: ViewRun): Promise<void> {
  if (run.outcomeCode !== 'setup_failed') return;
  const setup = await readFailedSetup(db, run.id);
  if (!setup) return;
  run.failedSetup = {
    id: setup.id,
    name: setup.name,
    status: setup.status,
    resultSummary: setup.result_summary,
    suiteRunId: run.suiteRunId,
    suiteRunToken: run.suiteRunId === null ? null : sign('suite-run', run.suiteRunId),
  };
}

/**
 * Every run's search text (see searchText), its steps' labels and errors included, by run id: what a
 * suite page's search looks through. Labels and errors are stored masked, so no secret is searchable.
 */
export async function loadSuiteSearchTexts(db: Db, suiteRunId: string): Promise<Map<string, string>> {
  const rows = await db.$queryRaw<
    Array<{
      id: string;
      test_name: string;
      result_summary: string;
      outcome_message: string | null;
      steps: string | null;
    }>
  >`
    SELECT r.id, r.test_name, r.result_summary, r.outcome_message,
      (SELECT string_agg(st.label || COALESCE(' ' || st.error, ''), E'\n' ORDER BY st.attempt, st.index)
        FROM step_results st WHERE st.run_id = r.id) AS steps
    FROM runs r WHERE r.suite_run_id = ${suiteRunId} ORDER BY r.position`;
  return new Map(
    rows.map((r) => [
      r.id,
      searchText(
        { testName: r.test_name, resultSummary: r.result_summary, outcomeMessage: r.outcome_message },
        r.steps ?? '',
      ),
    ]),
  );
}

/** What a live page's line on the time in the queue is made from. */
const QUEUE_COLUMNS = { createdAt: true, startedAt: true, queuedAhead: true } as const;

function liveQueueWait(row: Queued): Pick<LiveStatus, 'queueWaitText'> {
  const text = queueWaitText(row);
  return text === null ? {} : { queueWaitText: text };
}

const LIVE_RUN_COLUMNS = { id: true, status: true, retry: true, resultSummary: true, durationMs: true } as const;

type LiveRunRow = Omit<LiveStatus['runs'][number], 'durationText' | 'flaky'> & { retry: number };

function liveRun({ retry, ...run }: LiveRunRow): LiveStatus['runs'][number] {
  return { ...run, flaky: isFlaky({ status: run.status, retry }), durationText: formatDuration(run.durationMs) };
}

export async function loadSuiteLiveStatus(db: Db, suiteRunId: string): Promise<LiveStatus | null> {
  const suiteRun = await db.suiteRun.findUnique({
    where: { id: suiteRunId },
    select: { ...COUNT_COLUMNS, ...QUEUE_COLUMNS },
  });
  if (!suiteRun) return null;
  const runs = await db.run.findMany({ where: { suiteRunId }, select: LIVE_RUN_COLUMNS, orderBy: { position: 'asc' } });
  return {
    status: suiteRun.status,
    terminal: isTerminalRunStatus(suiteRun.status),
    counts: countsOf(suiteRun, runs),
    ...liveQueueWait(suiteRun),
    runs: runs.map(liveRun),
  };
}

export async function loadRunLiveStatus(db: Db, runId: string): Promise<LiveStatus | null> {
  const row = await db.run.findUnique({ where: { id: runId }, select: { ...LIVE_RUN_COLUMNS, ...QUEUE_COLUMNS } });
  if (!row) return null;
  const { createdAt, startedAt, queuedAhead, ...run } = row;
  return {
    status: run.status,
    terminal: isTerminalRunStatus(run.status),
    ...liveQueueWait({ status: run.status, createdAt, startedAt, queuedAhead }),
    runs: [liveRun(run)],
  };
}

/**
 * An artifact only when it belongs to the given run: the run's token never opens another run's
 * files. `expired` when there is none because retention deleted the run's artifacts.
 */
export async function findRunArtifact(db: Db, runId: string, artifactId: string) {
  const artifact = await db.artifact.findFirst({
    where: { id: artifactId, runId },
    select: { id: true, kind: true, name: true, storageKey: true, contentType: true, sizeBytes: true },
  });
  if (artifact) return artifact;
  const run = await db.run.findUnique({ where: { id: runId }, select: { artifactsExpiredAt: true } });
  return run?.artifactsExpiredAt ? ('expired' as const) : null;
}
