import { readEvidenceSettings, resolveEvidence, type EvidencePolicy, type EvidenceSettings } from '@testrun/contracts';
import { Prisma, type DbTx } from '../db';
import { ID_PREFIX, newId } from '../ids';
import { deriveSuiteStatus } from './state';
import { sealHeaders } from '../secrets/seal';
import { SEALED_COPY_TTL_MS, sealSuiteRunCopy } from './suite-run-copy';
import { sealRunVariables, type RunVariables } from '../secrets/variables';

/**
 * A test about to get a run. The run snapshots the test's name, steps, timeout and project from the
 * test's row (or, for a deployment other than the active one, from that deployment's definition of
 * the test), read by the inserting statement itself.
 */
export type PlannedTest = {
  id: string;
  /** A disabled test gets a run created `skipped`; an enabled one a `queued` run. */
  enabled: boolean;
  /** The project's base URL, used unless the request overrides it. */
  baseUrl: string;
  /** The test's own evidence settings as stored (JSON, null when none). */
  evidence?: Prisma.JsonValue;
  /** The project's evidence settings as stored (JSON, null when none). */
  projectEvidence?: Prisma.JsonValue;
  /**
   * The suite the run is listed in outside a suite run (a test several suites select: the first of
   * them in its deployment); default the test row's. A suite run's runs are its suite's.
   */
  suiteId?: string;
};

/** What one request creates: a suite run with its children when `suiteId` is set, loose runs otherwise. */
export type RunsToCreate = {
  workspaceId: string;
  /** The suite of a suite-mode request; `null` for single-test and project requests (no suite run). */
  suiteId: string | null;
  tests: PlannedTest[];
  /** Overrides every test's `baseUrl`. */
  baseUrl?: string | null;
  /** Sealed into each run that will execute, under `headersKey`. */
  headers?: Record<string, string> | null;
  /** The request's `variables` and `secretVariables`, sealed like the headers into each run that will execute. */
  variables?: RunVariables | null;
  /** The request's evidence settings: they win over the test's and the project's, key by key. */
  evidence?: EvidenceSettings | null;
  /** The request's `retries`: overrides every test's. Default none (each run takes its test's). */
  retries?: number | null;
  /** The request's `workers`: written over each Playwright test's config `workers` in its run's definition. */
  workers?: number | null;
  headersKey: Buffer;
  /**
   * The id of the API request that creates the runs (its X-Request-Id), kept on each run so the
   * worker's log lines of the run carry it too. Default none.
   */
  requestId?: string | null;
  /** The suite run a rerun is made from (kept as the new suite run's `rerun_of`). Default none. */
  rerunOf?: string | null;
  /** The deployment the runs execute, kept on each run and the suite run. Default none (before deployments). */
  deploymentId?: string | null;
  /**
   * Snapshot the tests from `deploymentId`'s own definitions (deployment_tests) rather than from the
   * live rows: for a deployment that is not the active one (a preview, or an older version).
   */
  fromDeployment?: boolean;
  /**
   * The workspace's runs queued or running when these are created (what the plan-limit check
   * counted): kept on each queued run as the runs ahead of it in the workspace's line, and on the
   * suite run as those ahead of its first run, so its page can say why it waited. Default unknown.
   */
  queuedAhead?: number | null;
};

export type CreatedRunRows = { suiteRunId: string | null; runIds: string[]; queuedRunIds: string[] };

export const QUEUED_SUMMARY = 'Queued; waiting for a worker.';
export const DISABLED_SUMMARY = 'Skipped: the test is disabled.';

/**
 * Writes the suite run (if any) and one run per test, in test order, with the counters set as the
 * children are: enabled tests `queued`, disabled ones `skipped` (`test_disabled`). The one place
 * runs are created, for the API and for tests; call it inside the request's transaction.
 */
export async function insertRuns(tx: DbTx, input: RunsToCreate): Promise<CreatedRunRows> {
  const { workspaceId, suiteId, tests } = input;
  const deploymentId = input.deploymentId ?? null;
  // The definitions to snapshot: the deployment's own when asked, else (no match) the live row's.
  const definitionsOf = input.fromDeployment ? deploymentId : null;
  const now = new Date();
  const queued = tests.filter((t) => t.enabled).length;
  const suiteRunId = suiteId === null ? null : newId(ID_PREFIX.suiteRun);
  if (suiteId !== null && suiteRunId !== null) {
    const counts = {
      total: tests.length,
      queued,
      running: 0,
      passed: 0,
      failed: 0,
      error: 0,
      skipped: tests.length - queued,
    };
    const status = deriveSuiteStatus(counts);
    // A child created skipped has already left `queued`, so the suite run has started.
    const startedAt = status === 'queued' ? null : now;
    const finishedAt = status === 'queued' || status === 'running' ? null : now;
    // The suite run keeps its own sealed copy of the headers and variables for a while, for reruns.
    const copy = sealSuiteRunCopy(input.headersKey, suiteRunId, input.headers, input.variables);
    const sealedUntil = copy.sealedFields ? new Date(now.getTime() + SEALED_COPY_TTL_MS) : null;
    await tx.$executeRaw`
      INSERT INTO suite_runs (id, workspace_id, suite_id, project_id, status, total_count, queued_count, running_count,
        skipped_count, started_at, finished_at, rerun_of, headers_sealed, variables_sealed, sealed_fields, sealed_until,
        deployment_id, queued_ahead, preview)
      SELECT ${suiteRunId}, ${workspaceId}, su.id, su.project_id, ${status}::"RunStatus", ${counts.total}, ${counts.queued},
        0, ${counts.skipped}, ${startedAt}, ${finishedAt}, ${input.rerunOf ?? null}::text, ${copy.headersSealed}::bytea,
        ${copy.variablesSealed}::bytea, ${copy.sealedFields}::text, ${sealedUntil}::timestamptz, ${deploymentId}::text,
        ${queued > 0 ? (input.queuedAhead ?? null) : null}::int, ${previewOf(input)}::boolean
      FROM suites su WHERE su.id = ${suiteId}`;
  }
  // One statement whatever the number of runs: the rows travel as one JSON parameter and the test
  // snapshots are read from `tests` by the INSERT itself. Policies are few; each row names its own.
  const { rows, runIds, queuedRunIds, policies } = runRows(input);
  const inserted = await tx.$executeRaw`
    INSERT INTO runs (id, workspace_id, project_id, suite_id, test_id, suite_run_id, position, status, base_url,
      headers_sealed, variables_sealed, test_name, kind, steps, timeout_ms, evidence, result_summary, skip_reason,
      finished_at, request_id, retries, retries_requested, deployment_id, queued_ahead, preview)
    SELECT r.id, ${workspaceId}::text, t.project_id, COALESCE(${suiteId}::text, r.s, t.suite_id), t.id,
      ${suiteRunId}::text, r.p,
      CASE WHEN r.e THEN 'queued' ELSE 'skipped' END::"RunStatus", r.u, decode(r.h, 'base64'), decode(r.v, 'base64'),
      COALESCE(d.name, t.name), CASE WHEN jsonb_typeof(COALESCE(d.steps, t.steps) -> 'playwright') = 'object'
        THEN 'playwright' ELSE 'steps' END, ${definitionWithWorkers(input.workers ?? null)},
      COALESCE(d.timeout_ms, t.timeout_ms),
      ${JSON.stringify([...policies.values()].map((k) => k.policy))}::jsonb -> r.x,
      CASE WHEN r.e THEN ${QUEUED_SUMMARY}::text ELSE ${DISABLED_SUMMARY}::text END,
      CASE WHEN r.e THEN NULL ELSE 'test_disabled' END::"SkipReason",
      CASE WHEN r.e THEN NULL ELSE ${now}::timestamptz END, ${input.requestId ?? null}::text,
      COALESCE(${input.retries ?? null}::int, d.retries, t.retries), ${input.retries != null}, ${deploymentId}::text,
      r.a, ${previewOf(input)}::boolean
    FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb) AS r(id text, t text, s text, p int, e boolean, u text, h text, v text,
      x int, a int)
    JOIN tests t ON t.id = r.t AND t.workspace_id = ${workspaceId}::text
    LEFT JOIN LATERAL (SELECT * FROM deployment_tests dt WHERE dt.deployment_id = ${definitionsOf}::text
      AND dt.test_id = t.id ORDER BY dt.position LIMIT 1) d ON true`;
  if (inserted !== rows.length) {
    throw new Error(`${rows.length - inserted} of the tests to run are not tests of workspace ${workspaceId}`);
  }
  return { suiteRunId, runIds, queuedRunIds };
}

/**
 * The run's definition, the deployment's snapshot else the test's: with the request's `workers`
 * written over a Playwright test's config `workers` (as `playwright test --workers` would).
 */
function definitionWithWorkers(workers: number | null): Prisma.Sql {
  if (workers === null) return Prisma.sql`COALESCE(d.steps, t.steps)`;
  return Prisma.sql`CASE WHEN jsonb_typeof(COALESCE(d.steps, t.steps) -> 'playwright') = 'object'
    THEN jsonb_set(COALESCE(d.steps, t.steps), '{playwright,workers}', to_jsonb(${workers}::int))
    ELSE COALESCE(d.steps, t.steps) END`;
}

/** Whether the runs execute a deployment other than the project's active one; null without a deployment. */
function previewOf(input: RunsToCreate): boolean | null {
  return input.deploymentId ? input.fromDeployment === true : null;
}

/** One row per test for the INSERT (the run's id, sealed headers and variables, evidence policy's index). */
function runRows(input: RunsToCreate) {
  const policies = new Map<string, { index: number; policy: EvidencePolicy }>();
  const runIds: string[] = [];
  const queuedRunIds: string[] = [];
  const ahead = input.queuedAhead ?? null;
  const rows = input.tests.map((t, position) => {
    const id = newId(ID_PREFIX.run);
    runIds.push(id);
    // Its place in the workspace's line less one: the runs already there, then this request's before it.
    const a = t.enabled && ahead !== null ? ahead + queuedRunIds.length : null;
    if (t.enabled) queuedRunIds.push(id);
    const policy = runEvidence(t, input.evidence);
    const policyKey = `${policy.trace} ${policy.video} ${policy.screenshots}`;
    let known = policies.get(policyKey);
    if (!known) {
      known = { index: policies.size, policy };
      policies.set(policyKey, known);
    }
    return {
      id,
      t: t.id,
      s: t.suiteId ?? null,
      p: position,
      e: t.enabled,
      u: input.baseUrl ?? t.baseUrl,
      // Headers and variables only matter to a run that will execute; a skipped run never holds them.
      h: t.enabled && input.headers ? sealHeaders(input.headersKey, id, input.headers).toString('base64') : null,
      v:
        t.enabled && input.variables
          ? sealRunVariables(input.headersKey, id, input.variables).toString('base64')
          : null,
      x: known.index,
      a,
    };
  });
  return { rows, runIds, queuedRunIds, policies };
}

/** The policy a run of `test` keeps evidence by: request > test > project > default, each key on its own. */
function runEvidence(test: PlannedTest, request: EvidenceSettings | null | undefined): EvidencePolicy {
  return resolveEvidence({
    project: readEvidenceSettings(test.projectEvidence),
    test: readEvidenceSettings(test.evidence),
    request,
  });
}

/** The columns that say how a run ended, as the API's Run and the view read them. */
export const RUN_OUTCOME_COLUMNS = {
  status: true,
  resultSummary: true,
  outcomeCode: true,
  outcomeMessage: true,
  outcomeStep: true,
  skipReason: true,
} as const satisfies Prisma.RunSelect;
