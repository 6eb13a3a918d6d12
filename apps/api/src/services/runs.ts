import {
  overCap,
  REQUEST_LIMITS,
  type ApiKeyScope,
  type ParsedRunRequest,
  type RunCreateResponse,
  type RunTarget,
} from '@testrun/contracts';
import type { Db, DbTx, Prisma } from '@testrun/core/db';
import type { Logger } from '@testrun/core/logger';
import { deploymentTests, runnableDeployment, type RunnableDeployment } from '@testrun/core/projects';
import { addRunJobs, type RunQueue } from '@testrun/core/queue';
import { countWorkspaceRuns, insertRuns, positionsAfter, type PlannedTest } from '@testrun/core/runs';
import type { DerivedKeys } from '@testrun/core/secrets';
import type { TargetPolicy } from '@testrun/core/target-policy';
import { withTimeout } from '@testrun/core/with-timeout';
import { ApiError, errorMessage } from '../errors';
import { requireScope } from '../scopes';
import { checkRunTarget } from './target-check';

export type CreateRunsInput = {
  workspaceId: string;
  request: ParsedRunRequest;
  /** The deployment's target network policy: a base URL it refuses is a 422 and creates nothing. */
  targetPolicy: TargetPolicy;
  /** The request's id, kept on every run it creates (the worker's log lines of the run carry it). */
  requestId?: string;
  /** The key's scopes: a deploymentId other than the active deployment's needs `preview`. */
  scopes: readonly ApiKeyScope[];
};

export type CreatedRuns = {
  body: RunCreateResponse;
  runIds: string[];
  queuedRunIds: string[];
  /** The workspace's runs queued or running when these were created: the queued runs line up behind them. */
  queuedAhead: number;
};

/** Called inside the creating transaction, so what it writes commits or rolls back with the runs. */
export type InTransaction = (tx: DbTx, body: RunCreateResponse) => Promise<void>;

/** How long a request waits for Redis to take its jobs before answering without them. */
const ENQUEUE_TIMEOUT_MS = 3_000;

/**
 * Records the runs of one request, all or nothing: resolves what to run in the key's workspace
 * (404), checks the plan limits with the workspace row locked (422), then writes the suite run and
 * every run in one transaction. Jobs are added afterwards by {@link enqueueRunJobs}.
 */
export async function createRuns(
  db: Db,
  keys: DerivedKeys,
  input: CreateRunsInput,
  inTransaction?: InTransaction,
): Promise<CreatedRuns> {
  const { workspaceId, request, targetPolicy, requestId } = input;
  return db.$transaction(
    async (tx) => {
      const { tests, suiteId, deployment } = await resolveTests(tx, workspaceId, request);
      if (deployment.fromDeployment) requireScope(input, 'preview');
      if (tests.length === 0) {
        throw new ApiError('empty_suite', `${describeTarget(request.target)} has no tests to run.`);
      }
      if (tests.length > REQUEST_LIMITS.maxRunsPerRequest) {
        throw new ApiError(
          'too_many_runs',
          overCap(
            'REQUEST_LIMITS.maxRunsPerRequest',
            `${describeTarget(request.target)} has ${tests.length} tests; one request may create at most ${REQUEST_LIMITS.maxRunsPerRequest} runs.`,
          ),
        );
      }
      // One project per request: every test shares the effective base URL.
      await checkRunTarget(tx, targetPolicy, workspaceId, request.baseUrl ?? tests[0]?.baseUrl ?? '');
      const toQueue = tests.filter((t) => t.enabled).length;
      const queuedAhead = await checkPlanLimits(tx, workspaceId, toQueue);

      const created = await insertRuns(tx, {
        workspaceId,
        suiteId,
        tests,
        baseUrl: request.baseUrl,
        headers: request.headers,
        variables:
          request.variables || request.secretVariables
            ? { vars: request.variables ?? {}, secrets: request.secretVariables ?? {} }
            : null,
        evidence: request.evidence,
        retries: request.retries,
        headersKey: keys.headers,
        requestId,
        deploymentId: deployment.deploymentId,
        fromDeployment: deployment.fromDeployment,
        queuedAhead,
      });
      const { suiteRunId, runIds, queuedRunIds } = created;
      const [firstRunId] = runIds;
      const body: RunCreateResponse =
        request.target.mode === 'test' && firstRunId ? { runId: firstRunId } : suiteRunId ? { suiteRunId } : { runIds };
      if (inTransaction) await inTransaction(tx, body);
      return { body, runIds, queuedRunIds, queuedAhead };
    },
    { maxWait: 5_000, timeout: 20_000 },
  );
}

function describeTarget(target: RunTarget): string {
  switch (target.mode) {
    case 'test':
      return `Test "${target.testId}"`;
    case 'suite':
      return `Suite "${target.suiteSlug}"`;
    case 'project':
      return `Project "${target.projectSlug}"`;
  }
}

/** What a request runs: its tests, its suite (suite mode) and the deployment they execute. */
type Resolved = {
  tests: PlannedTest[];
  suiteId: string | null;
  deployment: Pick<RunnableDeployment, 'deploymentId' | 'fromDeployment'>;
};

async function resolveTests(tx: DbTx, workspaceId: string, request: ParsedRunRequest): Promise<Resolved> {
  const target = request.target;
  if (target.mode === 'test') {
    // A test of a preview may be archived (not in the active version): its deployment decides.
    // The id of a test merged into another (test_aliases) addresses the test it was merged into.
    const test = await tx.test.findFirst({
      where: { workspaceId, OR: [{ id: target.testId }, { aliases: { some: { id: target.testId } } }] },
      select: { id: true, enabled: true, evidence: true, archivedAt: true, projectId: true },
    });
    const notFound = new ApiError('not_found', `No test "${target.testId}" in this workspace.`);
    if (!test) throw notFound;
    const { project, deployment } = await runnable(tx, test.projectId, request);
    if (!deployment.fromDeployment) {
      if (test.archivedAt !== null) throw notFound;
      return { tests: [ofProject(test, project)], suiteId: null, deployment };
    }
    const [defined] = await deploymentTests(tx, deployment.deploymentId ?? '', { testId: test.id });
    if (!defined)
      throw new ApiError('not_found', `No test "${target.testId}" in deployment "${request.deploymentId}".`);
    return { tests: [ofProject(defined, project)], suiteId: null, deployment };
  }
  const [row] = await tx.$queryRaw<Array<{ id: string }>>`
    SELECT id FROM projects WHERE workspace_id = ${workspaceId} AND slug = ${target.projectSlug}`;
  if (!row) throw new ApiError('not_found', `No project "${target.projectSlug}" in this workspace.`);
  const { project, deployment } = await runnable(tx, row.id, request);
  const noSuite = () =>
    new ApiError(
      'not_found',
      `No suite "${target.mode === 'suite' ? target.suiteSlug : ''}" in project "${target.projectSlug}" of this workspace.`,
    );
  if (deployment.fromDeployment) {
    const narrow = target.mode === 'suite' ? { suiteSlug: target.suiteSlug } : {};
    const tests = await deploymentTests(tx, deployment.deploymentId ?? '', narrow);
    const suiteId = target.mode === 'suite' ? (tests[0]?.suite_id ?? null) : null;
    if (target.mode === 'suite' && suiteId === null) throw noSuite();
    return { tests: tests.map((t) => ({ ...ofProject(t, project), suiteId: t.suite_id })), suiteId, deployment };
  }
  // Only what decides each run is read; the INSERT copies the tests' names and steps itself.
  let suiteId: string | null = null;
  if (target.mode === 'suite') {
    const [suite] = await tx.$queryRaw<Array<{ id: string }>>`
      SELECT id FROM suites WHERE project_id = ${row.id} AND slug = ${target.suiteSlug} AND archived_at IS NULL`;
    if (!suite) throw noSuite();
    suiteId = suite.id;
  }
  if (deployment.deploymentId !== null) {
    // The active deployment lists each suite's tests: a test several suites select runs once for the project.
    const narrow = target.mode === 'suite' ? { suiteSlug: target.suiteSlug } : {};
    const tests = await deploymentTests(tx, deployment.deploymentId, narrow);
    return { tests: tests.map((t) => ({ ...ofProject(t, project), suiteId: t.suite_id })), suiteId, deployment };
  }
  // A project from before deployments: its live rows, each test in its one suite.
  const tests =
    suiteId !== null
      ? await tx.$queryRaw<TestRow[]>`
          SELECT id, enabled, evidence FROM tests WHERE suite_id = ${suiteId} AND archived_at IS NULL ORDER BY position`
      : await tx.$queryRaw<TestRow[]>`
          SELECT t.id, t.enabled, t.evidence FROM tests t JOIN suites s ON s.id = t.suite_id
          WHERE t.project_id = ${row.id} AND t.archived_at IS NULL AND s.archived_at IS NULL
          ORDER BY s.position, t.position`;
  return { tests: tests.map((t) => ofProject(t, project)), suiteId, deployment };
}

/**
 * The deployment a request runs (the project row held until it commits, so an activation waits for
 * it), and what the runs take from the project: the base URL and evidence settings of that
 * deployment. 404 for a deploymentId of no deployment of this project.
 */
async function runnable(tx: DbTx, projectId: string, request: ParsedRunRequest) {
  const deployment = await runnableDeployment(tx, projectId, request.deploymentId);
  if (!deployment)
    throw new ApiError('not_found', `No deployment "${request.deploymentId ?? ''}" of this project in this workspace.`);
  const project = { baseUrl: deployment.project.baseUrl, evidence: deployment.project.evidence as Prisma.JsonValue };
  return { deployment, project };
}

type TestRow = { id: string; enabled: boolean; evidence: Prisma.JsonValue };

/** A test row with what it takes from its project: the base URL and the evidence settings. */
function ofProject(
  test: { id: string; enabled: boolean; evidence: unknown },
  project: { baseUrl: string; evidence: Prisma.JsonValue },
): PlannedTest {
  return {
    id: test.id,
    enabled: test.enabled,
    evidence: test.evidence as Prisma.JsonValue,
    baseUrl: project.baseUrl,
    projectEvidence: project.evidence,
  };
}

/**
 * Refuses a request that would pass the workspace's limits, and gives the count of its runs queued
 * or running. The workspace row stays locked until the transaction ends, so two concurrent requests
 * cannot both pass the same limit. The lock is FOR NO KEY UPDATE: it excludes only another request
 * of the same workspace (and changes to the row), never the rows that merely reference the workspace
 * (a worker's artifacts, say), and no other workspace's requests.
 */
export async function checkPlanLimits(tx: DbTx, workspaceId: string, adding: number): Promise<number> {
  const [ws] = await tx.$queryRaw<Array<{ max_active_runs: number; monthly_runs: number; plan: string }>>`
    SELECT max_active_runs, monthly_runs, plan::text AS plan FROM workspaces WHERE id = ${workspaceId} FOR NO KEY UPDATE`;
  if (!ws || adding === 0) return 0;
  const { active, monthly } = await countWorkspaceRuns(tx, workspaceId);
  if (active + adding > ws.max_active_runs) {
    throw new ApiError(
      'plan_limit_exceeded',
      `Limit "active runs" (${ws.plan} plan): at most ${ws.max_active_runs} runs may be queued or running at once; ${active} are, and this request would add ${adding}.`,
    );
  }
  if (monthly + adding > ws.monthly_runs) {
    throw new ApiError(
      'plan_limit_exceeded',
      `Limit "monthly runs" (${ws.plan} plan): at most ${ws.monthly_runs} runs per calendar month (UTC); ${monthly} were created this month, and this request would add ${adding}.`,
    );
  }
  return active;
}

/**
 * Adds the jobs of recorded runs. A Redis failure is logged and swallowed: the runs are already in
 * Postgres and the worker's reconciler adds the job of every queued run that has none.
 */
export async function enqueueRunJobs(
  queue: RunQueue,
  logger: Logger,
  { queuedRunIds: runIds, queuedAhead }: Pick<CreatedRuns, 'queuedRunIds' | 'queuedAhead'>,
): Promise<void> {
  if (runIds.length === 0) return;
  try {
    // Each job's priority is its run's place in its workspace's line (fair sharing of the workers),
    // as core's fairPositions would read it back.
    const positions = positionsAfter(queuedAhead, runIds);
    // BullMQ waits for a connection that is not ready yet; the client should not wait with it.
    await withTimeout(addRunJobs(queue, runIds, positions), ENQUEUE_TIMEOUT_MS, 'adding run jobs');
  } catch (e) {
    logger.warn('could not add run jobs; the reconciler will add them', { runIds, error: errorMessage(e) });
  }
}
