import { STEP_OUTCOMES, type StepOutcome } from '@testrun/contracts';
import { readSql, type Db } from '@testrun/core/db';
import type { LinkSigner, ViewArtifact, ViewAttempt, ViewRun, ViewStep } from '../model';
import type { PageEvent } from '@testrun/contracts';
import { scopeSql, type RunScope } from './scope';

// The rows of a run as the pages show it, and its details (steps, artifacts, page events) read for
// many runs at once.

/**
 * A Playwright test's declaration (file, line, column, title path, project) from the definition
 * the run executed; null for a step test, whose definition is an array of steps.
 */
const LOCATION_SELECT = `CASE WHEN jsonb_typeof(steps) = 'object' AND jsonb_typeof(steps->'playwright'->'file') = 'string'
  THEN jsonb_build_object('file', steps->'playwright'->'file', 'line', steps->'playwright'->'line',
    'column', steps->'playwright'->'column', 'titlePath', steps->'playwright'->'titlePath',
    'project', steps->'playwright'->'project') END AS location`;

/**
 * A run as the pages show it, read straight through the pool (a 1,000-test suite page reads 1,000
 * of them; Prisma's per-row work was most of the request). An explicit column list: the view never
 * reads headers_sealed, so header values cannot reach a page. The test's steps are only counted.
 */
export const RUN_SELECT = `SELECT id, suite_run_id AS "suiteRunId", position, test_name AS "testName", status::text AS status,
  result_summary AS "resultSummary", outcome_code::text AS "outcomeCode", outcome_message AS "outcomeMessage",
  outcome_step AS "outcomeStep", skip_reason::text AS "skipReason", base_url AS "baseUrl", attempt, retry, retries,
  CASE WHEN jsonb_typeof(steps) = 'array' THEN jsonb_array_length(steps) ELSE 0 END AS "plannedSteps", created_at AS "createdAt", started_at AS "startedAt",
  finished_at AS "finishedAt", duration_ms AS "durationMs", artifacts_expired_at AS "artifactsExpiredAt", queued_ahead AS "queuedAhead",
  ${LOCATION_SELECT}
  FROM runs`;

/** A run row as RUN_SELECT reads it: the view's run before its token and details are added. */
export type RunRow = Omit<ViewRun, 'token' | 'steps' | 'artifacts' | 'pageEvents' | 'earlierAttempts'>;

export function toViewRun(sign: LinkSigner, row: RunRow): ViewRun {
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
  ) => `SELECT s.run_id AS "runId", s.attempt, s.index, COALESCE(s.action::text, s.category) AS action, s.depth, s.location,
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

type EventRow = { runId: string; attempt: number } & PageEvent;

/** What {@link readDetails} reads: the rows of a scope's runs. */
type DetailRows = { steps: StepRow[]; artifacts: ArtifactRow[]; events: EventRow[] };

/**
 * The steps, artifacts and page events of the scope's runs, of their current attempts or of every
 * attempt. A suite page reads only the runs it shows open, so a 1,000-test suite of passes stays
 * cheap.
 */
export async function readDetails(db: Db, scope: RunScope, attempts: Attempts = 'current'): Promise<DetailRows> {
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
export function ofAttempt(rows: DetailRows, attempt: number): DetailRows {
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
export function detailsOf(rows: DetailRows): Pick<ViewAttempt, 'steps' | 'artifacts' | 'pageEvents'> {
  return {
    steps: rows.steps.map(toViewStep),
    artifacts: rows.artifacts.map(toViewArtifact),
    pageEvents: rows.events.map(({ runId: _runId, attempt: _attempt, ...event }) => event),
  };
}

/** Sets each run's steps, artifacts and page events from the rows {@link readDetails} read for them. */
export function attachDetails(runs: ViewRun[], rows: DetailRows): void {
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
