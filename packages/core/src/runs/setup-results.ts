// The setup tests a suite run's Playwright tests depended on (docs/PLAYWRIGHT.md, "Setup projects"):
// one row of `setup_results` per setup test per suite run (or per run outside a suite run), written
// as each execution ends, read with the suite run (or the run). They are not runs: no counter of the
// suite run counts them. Their evidence is in setup-artifacts.ts.
import {
  isRunErrorCode,
  type FailedSetup,
  type RunFailure,
  type RunOutcomeCode,
  type SetupArtifact,
  type SetupTest,
  type TestLocation,
} from '@testrun/contracts';
import { readSql, type Db } from '../db';
import { ID_PREFIX, newId } from '../ids';

/** One step of a setup test's execution, as its row keeps it (masked, depth first). */
export type SetupStep = {
  category: string;
  depth: number;
  label: string;
  location: string | null;
  outcome: 'passed' | 'failed' | 'error';
  error: string | null;
  durationMs: number;
};

/** One execution of a setup test, as the worker records it. */
export type SetupResultInput = {
  workspaceId: string;
  /** Its owner: the suite run of the sandbox's runs, else (null) the run outside a suite run, `runId`. */
  suiteRunId: string | null;
  runId: string | null;
  /** This execution's own id: the entry keeps it while it shows this execution (its evidence's key). */
  executionId: string;
  key: string;
  name: string;
  location: TestLocation;
  status: 'passed' | 'failed' | 'error' | 'skipped';
  outcomeCode: string | null;
  outcomeMessage: string | null;
  resultSummary: string;
  failure: RunFailure | null;
  steps: SetupStep[];
  durationMs: number;
  startedAt: Date;
  finishedAt: Date;
};

/** The columns of the execution shown, replaced by a later execution unless the one kept failed. */
const SHOWN = [
  'name',
  'location',
  'status',
  'outcome_code',
  'outcome_message',
  'result_summary',
  'failure',
  'steps',
  'duration_ms',
  'started_at',
  'finished_at',
  'execution_id',
] as const;

const KEEP_FAILURE = `setup_results.status IN ('failed', 'error')`;

const upsert = (owner: 'suite_run_id' | 'run_id') => `INSERT INTO setup_results (id, workspace_id, suite_run_id, run_id,
    key, name, location, status, outcome_code, outcome_message, result_summary, failure, steps, duration_ms, executions,
    failed_executions, started_at, finished_at, execution_id)
  VALUES ($1, $2, $3, $4, $5, $6, $7::jsonb, $8::"RunStatus", $9::"RunOutcomeCode", $10, $11, $12::jsonb, $13::jsonb, $14, 1,
    $15, $16, $17, $18)
  ON CONFLICT (${owner}, key) DO UPDATE SET
    executions = setup_results.executions + 1,
    failed_executions = setup_results.failed_executions + EXCLUDED.failed_executions,
    ${SHOWN.map((c) => `${c} = CASE WHEN ${KEEP_FAILURE} THEN setup_results.${c} ELSE EXCLUDED.${c} END`).join(',\n    ')}
  RETURNING id, execution_id`;
const UPSERT = { suite_run_id: upsert('suite_run_id'), run_id: upsert('run_id') };

/**
 * Records one execution of a setup test for its suite run (or its run outside a suite run). A setup
 * test runs once in each sandbox (a batch, or a run alone) of tests that depend on it: the suite run
 * keeps one entry per setup test, which shows the first execution that failed or ended in error (the
 * one its dependants ended on), else the latest; `executions` and `failed_executions` count them all.
 * Returns the entry's id and whether it now shows this execution (whose evidence is then kept).
 */
export async function recordSetupResult(db: Db, input: SetupResultInput): Promise<{ id: string; shown: boolean }> {
  const failed = input.status === 'failed' || input.status === 'error';
  // A failure code stays with a failed status and an error code with an error (as a run's).
  const code = input.status === 'passed' || input.status === 'skipped' ? null : input.outcomeCode;
  if ((input.suiteRunId === null) === (input.runId === null)) throw new Error('a setup test has one owner');
  const rows = await db.$queryRawUnsafe<{ id: string; execution_id: string }[]>(
    UPSERT[input.suiteRunId === null ? 'run_id' : 'suite_run_id'],
    newId(ID_PREFIX.setupResult),
    input.workspaceId,
    input.suiteRunId,
    input.runId,
    input.key,
    input.name,
    JSON.stringify(input.location),
    input.status,
    code,
    input.outcomeMessage,
    input.resultSummary,
    input.failure === null ? null : JSON.stringify(input.failure),
    JSON.stringify(input.steps),
    Math.max(0, Math.round(input.durationMs)),
    failed ? 1 : 0,
    input.startedAt,
    input.finishedAt,
    input.executionId,
  );
  const row = rows[0];
  if (!row) throw new Error('the setup test was not recorded');
  return { id: row.id, shown: row.execution_id === input.executionId };
}

type SetupRow = {
  id: string;
  name: string;
  location: TestLocation;
  status: SetupTest['status'];
  outcome_code: RunOutcomeCode | null;
  outcome_message: string | null;
  result_summary: string;
  failure: RunFailure | null;
  duration_ms: number;
  executions: number;
  failed_executions: number;
  /** A Date, or its JSON text when read inside a JSON aggregate. */
  started_at: Date | string;
  finished_at: Date | string;
  artifacts: SetupArtifact[] | null;
};

/** The columns of a setup test as the API gives it (with its steps for the view), its shown execution's evidence too. */
const SETUP_COLUMNS = `id, name, location, status::text AS status, outcome_code::text AS outcome_code, outcome_message,
  result_summary, failure, duration_ms, executions, failed_executions, started_at, finished_at,
  (SELECT json_agg(json_build_object('id', a.id, 'kind', a.kind, 'name', a.name, 'content_type', a.content_type,
      'size_bytes', a.size_bytes) ORDER BY a.created_at, a.id)
    FROM setup_artifacts a WHERE a.setup_result_id = setup_results.id AND a.execution_id = setup_results.execution_id)
    AS artifacts`;

function toSetupTest(row: SetupRow): SetupTest {
  return {
    id: row.id,
    name: row.name,
    status: row.status,
    result_summary: row.result_summary,
    error:
      row.status === 'error'
        ? {
            code: isRunErrorCode(row.outcome_code) ? row.outcome_code : 'internal_error',
            message: row.outcome_message ?? row.result_summary,
            step: null,
          }
        : null,
    ...(row.failure ? { failure: row.failure } : {}),
    location: row.location,
    duration_ms: row.duration_ms,
    executions: row.executions,
    failed_executions: row.failed_executions,
    started_at: new Date(row.started_at).toISOString(),
    finished_at: new Date(row.finished_at).toISOString(),
    ...(row.artifacts && row.artifacts.length > 0 ? { artifacts: row.artifacts } : {}),
  };
}

/**
 * For `SELECT … FROM suite_runs s`: its setup tests as a JSON array (null when it has none), in the
 * order their shown executions ended; {@link setupTestsOf} reads it.
 */
export const SETUP_TESTS = `(SELECT json_agg(row_to_json(x) ORDER BY x.finished_at, x.id)
      FROM (SELECT ${SETUP_COLUMNS} FROM setup_results WHERE suite_run_id = s.id) x) AS setup_tests`;

/** For `SELECT … FROM runs r`: as {@link SETUP_TESTS}, the setup tests of a run outside a suite run. */
export const RUN_SETUP_TESTS = `(SELECT json_agg(row_to_json(x) ORDER BY x.finished_at, x.id)
      FROM (SELECT ${SETUP_COLUMNS} FROM setup_results WHERE run_id = r.id) x) AS setup_tests`;

/** `{setup_tests}` of a suite run from its {@link SETUP_TESTS} column; nothing when it has none. */
export function setupTestsOf(rows: SetupRow[] | null): { setup_tests?: SetupTest[] } {
  return rows && rows.length > 0 ? { setup_tests: rows.map(toSetupTest) } : {};
}

/** The JSON the {@link SETUP_TESTS} column holds. */
export type SetupTestsColumn = SetupRow[] | null;

/** A setup test as the view shows it: the API's fields and its steps. */
export type SetupTestWithSteps = SetupTest & { steps: SetupStep[] };

/** Whose setup tests: a suite run's, or a run's outside a suite run. */
export type SetupOwnerId = { suiteRunId: string } | { runId: string };

/** A suite run's (or a run's) setup tests with their steps (the view's), in the order they ended. */
export async function readSetupTestsWithSteps(db: Db, owner: SetupOwnerId): Promise<SetupTestWithSteps[]> {
  const [column, id] = 'suiteRunId' in owner ? ['suite_run_id', owner.suiteRunId] : ['run_id', owner.runId];
  const rows = await readSql<SetupRow & { steps: SetupStep[] }>(
    db,
    `setup_results_with_steps_by_${column}`,
    `SELECT ${SETUP_COLUMNS}, steps FROM setup_results WHERE ${column} = $1 ORDER BY finished_at, id`,
    [id],
  );
  return rows.map((row) => ({ ...toSetupTest(row), steps: row.steps }));
}

/**
 * For `SELECT … FROM runs r`: the setup test a `setup_failed` run ended on (its suite run's, or its
 * own outside a suite run), as a JSON object (the contract's FailedSetup), null otherwise. Its
 * summary names the setup test; failing that, the first of the failed setup tests.
 */
export const FAILED_SETUP = `CASE WHEN r.outcome_code = 'setup_failed' THEN (
      SELECT json_build_object('id', sr.id, 'name', sr.name, 'status', sr.status, 'result_summary', sr.result_summary,
        'location', sr.location)
      FROM setup_results sr
      WHERE (sr.suite_run_id = r.suite_run_id OR (r.suite_run_id IS NULL AND sr.run_id = r.id))
        AND sr.status IN ('failed', 'error')
      ORDER BY strpos(r.result_summary, '"' || sr.name || '"') > 0 DESC, sr.finished_at, sr.id LIMIT 1) END AS failed_setup`;

/** The setup test a `setup_failed` run of a suite run ended on (see {@link FAILED_SETUP}); null for any other run. */
export async function readFailedSetup(db: Db, runId: string): Promise<FailedSetup | null> {
  const rows = await readSql<{ failed_setup: FailedSetup | null }>(
    db,
    'failed_setup_of_run',
    `SELECT ${FAILED_SETUP} FROM runs r WHERE r.id = $1`,
    [runId],
  );
  return rows[0]?.failed_setup ?? null;
}
