// The run and suite run as the API gives them (GET of each), read from Postgres: what the API answers
// and what webhooks carry, built by the same code.
import {
  isRunErrorCode,
  readEvidencePolicy,
  type Run,
  type RunAttachment,
  type VisualChange,
  type RunAttempt,
  type RunError,
  type RunFailure,
  type RunOutcomeCode,
  type RunStatus,
  type SkipReason,
  type SuiteRun,
  type SuiteRunStatus,
  type PlaywrightDefinition,
  type TestEntry,
  type TestLocation,
  type FailedSetup,
} from '@testrun/contracts';
import { readSql, type Db } from '../db';
import { FAILED_SETUP, RUN_SETUP_TESTS, SETUP_TESTS, setupTestsOf, type SetupTestsColumn } from './setup-results';
import type { DerivedKeys } from '../secrets/seal';
import { queueWaitColumns, queueWaitOf, type QueueWaitRow } from './queue-wait';
import { SUITE_VISUAL_COUNTS, suiteVisualOf, type SuiteVisualRow } from './suite-visual';
import { suiteRunViewUrl, viewLinkTerms, type ViewLinkConfig, type ViewLinkState } from '../view-links';
import {
  ATTACHMENT_COUNTS,
  ATTACHMENTS,
  VISUAL_CHANGES,
  BLOCKED_REQUESTS,
  FAILURE,
  PLAYWRIGHT_DEFINITION,
  PREVIOUS_ATTEMPTS,
  type AttemptRow,
} from './run-columns';

/** A run's row as {@link RUN_COLUMNS} selects it (from `runs r` joined to its suite run `s`). */
export type RunRow = QueueWaitRow & {
  id: string;
  status: RunStatus;
  evidence: unknown;
  result_summary: string;
  outcome_code: RunOutcomeCode | null;
  outcome_message: string | null;
  outcome_step: number | null;
  skip_reason: SkipReason | null;
  test_id: string;
  test_name: string;
  suite_run_id: string | null;
  deployment_id: string | null;
  created_at: Date;
  started_at: Date | null;
  finished_at: Date | null;
  duration_ms: number | null;
  attempt: number;
  retry: number;
  retries: number;
  blocked_request_count: number;
  /** The retried attempts, oldest first (see {@link PREVIOUS_ATTEMPTS}). */
  previous_attempts: AttemptRow[];
  view_token_version: number | null;
  /** The Playwright definition's `playwright` object (steps->'playwright'); null for a step test. */
  playwright: PlaywrightDefinition['playwright'] | null;
  /** A failed run's failing step (see {@link FAILURE}); null otherwise. */
  failure: RunFailure | null;
  /** A setup_failed run's setup test (see FAILED_SETUP); null otherwise. */
  failed_setup: FailedSetup | null;
  /** What its test attached in its current attempt (see {@link ATTACHMENTS}); null when none. */
  attachments: RunAttachment[] | null;
  /** What it found of its snapshots (see VISUAL_CHANGES); null when nothing. */
  visual_changes: VisualChange[] | null;
  /** A run outside a suite run: its setup tests (see RUN_SETUP_TESTS); null when none. */
  setup_tests: SetupTestsColumn;
};

/** What a Run is made of, for `SELECT … FROM runs r LEFT JOIN suite_runs s ON s.id = r.suite_run_id`. */
export const RUN_COLUMNS = `r.id, r.status::text AS status, r.evidence, r.result_summary, r.outcome_code::text AS outcome_code,
      r.outcome_message, r.outcome_step, r.skip_reason::text AS skip_reason, r.test_id, r.test_name, r.suite_run_id,
      r.deployment_id, r.created_at, r.started_at, r.finished_at, r.duration_ms, r.attempt, r.retry, r.retries, ${PREVIOUS_ATTEMPTS},
      ${BLOCKED_REQUESTS},
      COALESCE(s.view_token_version, r.view_token_version) AS view_token_version, ${PLAYWRIGHT_DEFINITION}, ${FAILURE},
      ${FAILED_SETUP}, ${queueWaitColumns('r')}, ${ATTACHMENTS}, ${VISUAL_CHANGES}, ${RUN_SETUP_TESTS}`;

/** `{location}`: where a Playwright test is declared, from its run's definition; nothing for a step test. */
function locationOf(playwright: PlaywrightDefinition['playwright'] | null): { location?: TestLocation } {
  if (!playwright || typeof playwright.file !== 'string') return {};
  const { file, line, column, titlePath, project, rootDir } = playwright;
  return { location: { file, line, column, titlePath, project, ...(rootDir ? { rootDir } : {}) } };
}

/** A run's row as the contract's Run. */
export function toRun(row: RunRow): Run {
  return {
    id: row.id,
    status: row.status,
    result_summary: row.result_summary,
    error:
      row.status === 'error'
        ? runError(row.outcome_code, row.outcome_message, row.result_summary, row.outcome_step)
        : null,
    skip_reason: row.status === 'skipped' ? row.skip_reason : null,
    // Runs created before evidence policies existed have none to show.
    ...(row.evidence === null ? {} : { evidence: readEvidencePolicy(row.evidence) }),
    test_id: row.test_id,
    test_name: row.test_name,
    suite_run_id: row.suite_run_id,
    deployment_id: row.deployment_id,
    created_at: row.created_at.toISOString(),
    started_at: row.started_at?.toISOString() ?? null,
    finished_at: row.finished_at?.toISOString() ?? null,
    duration_ms: row.finished_at ? row.duration_ms : null,
    // A claim (`attempt`) taken again after a worker was lost is the same attempt of the test.
    attempts: row.started_at ? row.retry + 1 : 0,
    retries: row.retries,
    flaky: isFlaky(row.status, row.retry),
    previous_attempts: row.previous_attempts.map(toRunAttempt),
    blocked_request_count: row.blocked_request_count,
    ...locationOf(row.playwright),
    ...queueWaitOf(row),
    ...(row.attachments ? { attachments: row.attachments } : {}),
    ...(row.visual_changes ? { visual_changes: row.visual_changes } : {}),
    ...(row.failure ? { failure: row.failure } : {}),
    ...(row.failed_setup ? { failed_setup: row.failed_setup } : {}),
    ...setupTestsOf(row.setup_tests),
  };
}

/** A run is flaky when it passed on a retry: an earlier attempt failed or ended in error. */
function isFlaky(status: RunStatus, retry: number): boolean {
  return status === 'passed' && retry > 0;
}

/** The wire's error of an `error` run or attempt. */
function runError(code: RunOutcomeCode | null, message: string | null, summary: string, step: number | null): RunError {
  // The database keeps failure codes off `error` runs (runs_outcome_code_matches_status).
  return { code: isRunErrorCode(code) ? code : 'internal_error', message: message ?? summary, step };
}

function toRunAttempt([
  retry,
  status,
  summary,
  code,
  message,
  step,
  startedAt,
  finishedAt,
  durationMs,
]: AttemptRow): RunAttempt {
  return {
    attempt: retry + 1,
    status,
    result_summary: summary,
    error: status === 'error' ? runError(code, message, summary, step) : null,
    started_at: new Date(startedAt).toISOString(),
    finished_at: new Date(finishedAt).toISOString(),
    duration_ms: durationMs,
  };
}

/** One run as the contract's Run, with the state its view link is signed with. */
export type RunRead = { run: Run; link: ViewLinkState };

/**
 * One run of the workspace as the contract's Run, with its view link's state, in one statement
 * (this is what clients poll); null for an unknown id or one of another workspace.
 */
export async function readRun(db: Db, workspaceId: string, runId: string): Promise<RunRead | null> {
  const rows = await readSql<RunRow>(
    db,
    'run_by_id',
    `SELECT ${RUN_COLUMNS}
    FROM runs r LEFT JOIN suite_runs s ON s.id = r.suite_run_id
    WHERE r.id = $1 AND r.workspace_id = $2`,
    [runId, workspaceId],
  );
  const row = rows[0];
  return row ? { run: toRun(row), link: { createdAt: row.created_at, version: row.view_token_version ?? 0 } } : null;
}

/** A suite run's row as {@link SUITE_RUN_COLUMNS} selects it (from `suite_runs s`). */
export type SuiteRunRow = QueueWaitRow & {
  id: string;
  status: SuiteRunStatus;
  total_count: number;
  passed_count: number;
  failed_count: number;
  error_count: number;
  skipped_count: number;
  flaky_count: number;
  created_at: Date;
  started_at: Date | null;
  finished_at: Date | null;
  view_token_version: number;
  rerun_of: string | null;
  deployment_id: string | null;
  visual_counts: SuiteVisualRow['visual_counts'];
};

/** What a suite run is made of, its tests aside, for `SELECT … FROM suite_runs s`. */
export const SUITE_RUN_COLUMNS = `s.id, s.status::text AS status, s.total_count, s.passed_count, s.failed_count,
      s.error_count, s.skipped_count, s.created_at, s.started_at, s.finished_at, s.view_token_version, s.rerun_of,
      s.deployment_id, (SELECT count(*)::int FROM runs f WHERE f.suite_run_id = s.id AND f.retry > 0 AND f.status = 'passed') AS flaky_count,
      ${queueWaitColumns('s')}, ${SUITE_VISUAL_COUNTS}`;

/** A suite run's row as the contract's SuiteRun without its tests, with its signed view link. */
export function toSuiteRunSummary(keys: DerivedKeys, links: ViewLinkConfig, row: SuiteRunRow): Omit<SuiteRun, 'tests'> {
  return {
    id: row.id,
    status: row.status,
    total_count: row.total_count,
    passed_count: row.passed_count,
    failed_count: row.failed_count,
    error_count: row.error_count,
    skipped_count: row.skipped_count,
    flaky_count: row.flaky_count,
    suiteRunUrl: suiteRunViewUrl(
      links.publicBaseUrl,
      keys.view,
      row.id,
      viewLinkTerms({ createdAt: row.created_at, version: row.view_token_version }),
    ),
    deployment_id: row.deployment_id,
    created_at: row.created_at.toISOString(),
    started_at: row.started_at?.toISOString() ?? null,
    finished_at: row.finished_at?.toISOString() ?? null,
    duration_ms: row.started_at && row.finished_at ? row.finished_at.getTime() - row.started_at.getTime() : null,
    rerun_of: row.rerun_of,
    ...queueWaitOf(row),
    ...suiteVisualOf(row),
  };
}

/**
 * One suite run of the workspace with its children in position order, in one statement (the
 * children come as one JSON array, built by Postgres from the (suite_run_id, position) index); null
 * for an unknown id or one of another workspace.
 */
export async function readSuiteRun(
  db: Db,
  keys: DerivedKeys,
  links: ViewLinkConfig,
  workspaceId: string,
  suiteRunId: string,
): Promise<SuiteRun | null> {
  type Row = SuiteRunRow & {
    /**
     * The children in position order as [id, test name, status, skip reason, duration, retry, started,
     * Playwright definition, attachment count] (a JSON array).
     */
    tests: Array<
      [
        string,
        string,
        RunStatus,
        SkipReason | null,
        number | null,
        number,
        boolean,
        PlaywrightDefinition['playwright'] | null,
        number,
      ]
    >;
    setup_tests: SetupTestsColumn;
  };
  const rows = await readSql<Row>(
    db,
    'suite_run_by_id',
    `SELECT ${SUITE_RUN_COLUMNS},
      COALESCE((SELECT json_agg(json_build_array(r.id, r.test_name, r.status, r.skip_reason,
          CASE WHEN r.finished_at IS NULL THEN NULL ELSE r.duration_ms END, r.retry, r.started_at IS NOT NULL,
          CASE WHEN jsonb_typeof(r.steps) = 'object' THEN r.steps->'playwright' END, COALESCE(ac.n, 0)) ORDER BY r.position)
        FROM runs r LEFT JOIN (${ATTACHMENT_COUNTS}) ac ON ac.run_id = r.id
        WHERE r.suite_run_id = s.id), '[]'::json) AS tests, ${SETUP_TESTS}
    FROM suite_runs s
    WHERE s.id = $1 AND s.workspace_id = $2`,
    [suiteRunId, workspaceId],
  );
  const row = rows[0];
  if (!row) return null;
  return {
    ...toSuiteRunSummary(keys, links, row),
    tests: row.tests.map(
      ([runId, name, status, skipReason, durationMs, retry, started, playwright, attachments]): TestEntry => ({
        runId,
        name,
        status,
        skipReason: status === 'skipped' ? skipReason : null,
        durationMs,
        flaky: isFlaky(status, retry),
        attempts: started ? retry + 1 : 0,
        ...locationOf(playwright),
        ...(attachments > 0 ? { attachmentCount: attachments } : {}),
      }),
    ),
    ...setupTestsOf(row.setup_tests),
  };
}
