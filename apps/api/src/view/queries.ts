// Over 300 lines: every read the view's pages make, in one place, so that the suite page's reads
// (runs, open tests' details, histories) go out at once through the pool; splitting them by page
// would split that batch. The next split is by page once the view's router moves beside the API's.
import {
  formatDuration,
  isTerminalRunStatus,
  STEP_OUTCOMES,
  type RunStatus,
  type StepOutcome,
} from '@testrun/contracts';
import { readSql, type Db } from '@testrun/core/db';
import { isFlaky, searchText } from './filters';
import { attachHistory, readHistory } from './history';
import { scopeSql, type RunScope } from './scope';
import type {
  LinkSigner,
  LiveStatus,
  ViewArtifact,
  ViewAttempt,
  ViewCounts,
  ViewPageEvent,
  ViewRun,
  ViewStep,
  ViewSuiteRun,
} from './model';

/**
 * A run as the pages show it, read straight through the pool (a 1,000-test suite page reads 1,000
 * of them; Prisma's per-row work was most of the request). An explicit column list: the view never
 * reads headers_sealed, so header values cannot reach a page. The test's steps are only counted.
 */
const RUN_SELECT = `SELECT id, suite_run_id AS "suiteRunId", position, test_name AS "testName", status::text AS status,
  result_summary AS "resultSummary", outcome_code::text AS "outcomeCode", outcome_message AS "outcomeMessage",
  outcome_step AS "outcomeStep", skip_reason::text AS "skipReason", base_url AS "baseUrl", attempt, retry, retries,
  jsonb_array_length(steps) AS "plannedSteps", created_at AS "createdAt", started_at AS "startedAt",
  finished_at AS "finishedAt", duration_ms AS "durationMs", artifacts_expired_at AS "artifactsExpiredAt"
  FROM runs`;

/** A run row as RUN_SELECT reads it: the view's run before its token and details are added. */
type RunRow = Omit<ViewRun, 'token' | 'steps' | 'artifacts' | 'pageEvents' | 'earlierAttempts'>;

function toViewRun(sign: LinkSigner, row: RunRow): ViewRun {
  return {
    ...row,
    token: sign('run', row.id),
    steps: null,
    artifacts: null,
    pageEvents: null,
    earlierAttempts: null,
  };
}

function isStepOutcome(value: string): value is StepOutcome {
  return (STEP_OUTCOMES as readonly string[]).includes(value);
}

/** A step row's outcome, checked: a value outside the closed set is a bug, not something to draw. */
function stepOutcome(value: string): StepOutcome {
  if (isStepOutcome(value)) return value;
  throw new Error(`step outcome "${value}" is not one of ${STEP_OUTCOMES.join(', ')}`);
}

type StepRow = { runId: string; attempt: number; outcome: string } & Omit<ViewStep, 'outcome'>;
type ArtifactRow = { runId: string; attempt: number } & ViewArtifact;

/** A step row as the view shows it, its outcome checked. */
function toViewStep({ runId: _runId, attempt: _attempt, outcome, ...step }: StepRow): ViewStep {
  return { ...step, outcome: stepOutcome(outcome) };
}

function toViewArtifact({ runId: _runId, attempt: _attempt, ...artifact }: ArtifactRow): ViewArtifact {
  return artifact;
}

/**
 * The rows of the scope's runs (`where` is a condition on the run, `r`): of their current attempts
 * (rows of earlier attempts left out), or of every attempt, for a retried run's page.
 */
type Attempts = 'current' | 'every';

/** Joins a detail row (under `alias`) to its run `r`: of the run's current attempt only, or of any. */
function joinRun(alias: string, attempts: Attempts): string {
  return `JOIN runs r ON r.id = ${alias}.run_id${attempts === 'current' ? ` AND r.attempt = ${alias}.attempt` : ''}`;
}

const DETAIL_SQL = {
  steps: (
    where: string,
    attempts: Attempts,
  ) => `SELECT s.run_id AS "runId", s.attempt, s.index, s.action::text AS action,
    s.label, s.target, s.outcome::text AS outcome, s.error, s.started_at AS "startedAt", s.duration_ms AS "durationMs",
    s.screenshot_id AS "screenshotId", s.expected, s.received, s.page_url AS "pageUrl", s.page_title AS "pageTitle"
    FROM step_results s ${joinRun('s', attempts)} WHERE ${where} ORDER BY s.run_id, s.attempt, s.index`,
  artifacts: (where: string, attempts: Attempts) => `SELECT a.run_id AS "runId", a.attempt, a.id, a.kind::text AS kind,
    a.step_index AS "stepIndex", a.name, a.content_type AS "contentType", a.size_bytes AS "sizeBytes"
    FROM artifacts a ${joinRun('a', attempts)} WHERE ${where}
    ORDER BY a.run_id, a.attempt, a.step_index NULLS LAST, a.created_at`,
  events: (where: string, attempts: Attempts) => `SELECT e.run_id AS "runId", e.attempt, e.kind::text AS kind, e.at,
    e.message, e.url, e.method, e.status
    FROM page_events e ${joinRun('e', attempts)} WHERE ${where} ORDER BY e.run_id, e.attempt, e.at`,
} as const;

type EventRow = { runId: string; attempt: number } & ViewPageEvent;

/** What {@link readDetails} reads: the rows of a scope's runs. */
type DetailRows = { steps: StepRow[]; artifacts: ArtifactRow[]; events: EventRow[] };

/**
 * The steps, artifacts and page events of the scope's runs, of their current attempts or of every
 * attempt. A suite page reads only the runs it shows open, so a 1,000-test suite of passes stays
 * cheap.
 */
async function readDetails(db: Db, scope: RunScope, attempts: Attempts = 'current'): Promise<DetailRows> {
  if ('runIds' in scope && scope.runIds.length === 0) return { steps: [], artifacts: [], events: [] };
  const { where, name, param } = scopeSql(scope, 'r');
  const read = <Row>(table: keyof typeof DETAIL_SQL) =>
    readSql<Row>(db, `view_${table}_${name}_${attempts}`, DETAIL_SQL[table](where, attempts), [param]);
  const [steps, artifacts, events] = await Promise.all([
    read<StepRow>('steps'),
    read<ArtifactRow>('artifacts'),
    read<EventRow>('events'),
  ]);
  return { steps, artifacts, events };
}

/** The rows of one attempt (an execution) among rows read for every attempt. */
function ofAttempt(rows: DetailRows, attempt: number): DetailRows {
  const mine = <T extends { attempt: number }>(list: T[]) => list.filter((row) => row.attempt === attempt);
  return { steps: mine(rows.steps), artifacts: mine(rows.artifacts), events: mine(rows.events) };
}

/** Rows grouped by run id, every run given having a list. */
function byRun<T extends { runId: string }>(runs: ViewRun[], rows: T[]): Map<string, T[]> {
  const grouped = new Map<string, T[]>(runs.map((r) => [r.id, []]));
  for (const row of rows) grouped.get(row.runId)?.push(row);
  return grouped;
}

/** One run's (or one attempt's) steps, artifacts and page events as the view shows them. */
function detailsOf(rows: DetailRows): Pick<ViewAttempt, 'steps' | 'artifacts' | 'pageEvents'> {
  return {
    steps: rows.steps.map(toViewStep),
    artifacts: rows.artifacts.map(toViewArtifact),
    pageEvents: rows.events.map(({ runId: _runId, attempt: _attempt, ...event }) => event),
  };
}

/** Sets each run's steps, artifacts and page events from the rows {@link readDetails} read for them. */
function attachDetails(runs: ViewRun[], rows: DetailRows): void {
  const steps = byRun(runs, rows.steps);
  const artifacts = byRun(runs, rows.artifacts);
  const events = byRun(runs, rows.events);
  for (const run of runs)
    Object.assign(
      run,
      detailsOf({
        steps: steps.get(run.id) ?? [],
        artifacts: artifacts.get(run.id) ?? [],
        events: events.get(run.id) ?? [],
      }),
    );
}

/** Whether a suite page renders a run's steps inline: everything except passes and skips. */
export function showsDetailsInline(run: Pick<ViewRun, 'status'>): boolean {
  return run.status !== 'passed' && run.status !== 'skipped';
}

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
  const [suiteRun, rows, details, history] = await Promise.all([
    db.suiteRun.findUnique({
      where: { id: suiteRunId },
      select: {
        ...COUNT_COLUMNS,
        id: true,
        createdAt: true,
        startedAt: true,
        finishedAt: true,
        suite: { select: { name: true, slug: true, project: { select: { name: true, slug: true } } } },
      },
    }),
    readSql<RunRow>(db, 'view_suite_runs', `${RUN_SELECT} WHERE suite_run_id = $1 ORDER BY position`, [suiteRunId]),
    readDetails(db, scope),
    readHistory(db, scope),
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
  };
}

export async function loadRun(db: Db, sign: LinkSigner, runId: string): Promise<ViewRun | null> {
  const [row] = await readSql<RunRow>(db, 'view_run', `${RUN_SELECT} WHERE id = $1`, [runId]);
  if (!row) return null;
  const run = toViewRun(sign, row);
  // A retried run's page shows every attempt: their rows are read at once and split by attempt.
  const retried = run.retry > 0;
  const [details, history, attempts] = await Promise.all([
    readDetails(db, { runIds: run.attempt > 0 ? [run.id] : [] }, retried ? 'every' : 'current'),
    readHistory(db, { runIds: [run.id] }),
    retried ? db.runAttempt.findMany({ where: { runId }, orderBy: { retry: 'asc' } }) : [],
  ]);
  attachDetails([run], retried ? ofAttempt(details, run.attempt) : details);
  attachHistory(sign, [run], history);
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

const LIVE_RUN_COLUMNS = { id: true, status: true, retry: true, resultSummary: true, durationMs: true } as const;

type LiveRunRow = Omit<LiveStatus['runs'][number], 'durationText' | 'flaky'> & { retry: number };

function liveRun({ retry, ...run }: LiveRunRow): LiveStatus['runs'][number] {
  return { ...run, flaky: isFlaky({ status: run.status, retry }), durationText: formatDuration(run.durationMs) };
}

export async function loadSuiteLiveStatus(db: Db, suiteRunId: string): Promise<LiveStatus | null> {
  const suiteRun = await db.suiteRun.findUnique({ where: { id: suiteRunId }, select: COUNT_COLUMNS });
  if (!suiteRun) return null;
  const runs = await db.run.findMany({ where: { suiteRunId }, select: LIVE_RUN_COLUMNS, orderBy: { position: 'asc' } });
  return {
    status: suiteRun.status,
    terminal: isTerminalRunStatus(suiteRun.status),
    counts: countsOf(suiteRun, runs),
    runs: runs.map(liveRun),
  };
}

export async function loadRunLiveStatus(db: Db, runId: string): Promise<LiveStatus | null> {
  const run = await db.run.findUnique({ where: { id: runId }, select: LIVE_RUN_COLUMNS });
  if (!run) return null;
  return { status: run.status, terminal: isTerminalRunStatus(run.status), runs: [liveRun(run)] };
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
