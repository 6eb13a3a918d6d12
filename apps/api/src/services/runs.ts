import {
  overCap,
  REQUEST_LIMITS,
  type ParsedRunRequest,
  type RunCreateResponse,
  type RunTarget,
} from '@testrun/contracts';
import {
  addRunJobs,
  fairPositions,
  insertRuns,
  withTimeout,
  type Db,
  type DbTx,
  type DerivedKeys,
  type Logger,
  type PlannedTest,
  type Prisma,
  type RunQueue,
  type TargetPolicy,
} from '@testrun/core';
import { ApiError, errorMessage } from '../errors';
import { checkRunTarget } from './target-check';

export type CreateRunsInput = {
  workspaceId: string;
  request: ParsedRunRequest;
  /** The deployment's target network policy: a base URL it refuses is a 422 and creates nothing. */
  targetPolicy: TargetPolicy;
};

export type CreatedRuns = { body: RunCreateResponse; runIds: string[]; queuedRunIds: string[] };

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
  const { workspaceId, request, targetPolicy } = input;
  return db.$transaction(
    async (tx) => {
      const { tests, suiteId } = await resolveTests(tx, workspaceId, request);
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
      await checkPlanLimits(tx, workspaceId, toQueue);

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
        headersKey: keys.headers,
      });
      const { suiteRunId, runIds, queuedRunIds } = created;
      const [firstRunId] = runIds;
      const body: RunCreateResponse =
        request.target.mode === 'test' && firstRunId ? { runId: firstRunId } : suiteRunId ? { suiteRunId } : { runIds };
      if (inTransaction) await inTransaction(tx, body);
      return { body, runIds, queuedRunIds };
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

async function resolveTests(
  tx: DbTx,
  workspaceId: string,
  request: ParsedRunRequest,
): Promise<{ tests: PlannedTest[]; suiteId: string | null }> {
  const target = request.target;
  const testFields = {
    id: true,
    projectId: true,
    name: true,
    enabled: true,
    timeoutMs: true,
    steps: true,
    evidence: true,
  } as const;
  if (target.mode === 'test') {
    const test = await tx.test.findFirst({
      where: { id: target.testId, workspaceId, archivedAt: null },
      select: { ...testFields, project: { select: { baseUrl: true, evidence: true } } },
    });
    if (!test) throw new ApiError('not_found', `No test "${target.testId}" in this workspace.`);
    const { project, ...fields } = test;
    return { tests: [ofProject(fields, project)], suiteId: null };
  }
  const project = await tx.project.findUnique({
    where: { workspaceId_slug: { workspaceId, slug: target.projectSlug } },
    select: { id: true, baseUrl: true, evidence: true },
  });
  if (!project) throw new ApiError('not_found', `No project "${target.projectSlug}" in this workspace.`);
  if (target.mode === 'suite') {
    const suite = await tx.suite.findFirst({
      where: { projectId: project.id, slug: target.suiteSlug, archivedAt: null },
      select: { id: true },
    });
    if (!suite)
      throw new ApiError(
        'not_found',
        `No suite "${target.suiteSlug}" in project "${target.projectSlug}" of this workspace.`,
      );
    const tests = await tx.test.findMany({
      where: { suiteId: suite.id, archivedAt: null },
      orderBy: { position: 'asc' },
      select: testFields,
    });
    return { tests: tests.map((t) => ofProject(t, project)), suiteId: suite.id };
  }
  const tests = await tx.test.findMany({
    where: { projectId: project.id, archivedAt: null, suite: { archivedAt: null } },
    orderBy: [{ suite: { position: 'asc' } }, { position: 'asc' }],
    select: testFields,
  });
  return { tests: tests.map((t) => ofProject(t, project)), suiteId: null };
}

/** A test row with what it takes from its project: the base URL and the evidence settings. */
function ofProject(
  test: Omit<PlannedTest, 'baseUrl' | 'projectEvidence'>,
  project: { baseUrl: string; evidence: Prisma.JsonValue },
): PlannedTest {
  return { ...test, baseUrl: project.baseUrl, projectEvidence: project.evidence };
}

/**
 * Refuses a request that would pass the workspace's limits. The workspace row stays locked until
 * the transaction ends, so two concurrent requests cannot both pass the same limit.
 */
async function checkPlanLimits(tx: DbTx, workspaceId: string, adding: number): Promise<void> {
  const [ws] = await tx.$queryRaw<Array<{ max_active_runs: number; monthly_runs: number; plan: string }>>`
    SELECT max_active_runs, monthly_runs, plan::text AS plan FROM workspaces WHERE id = ${workspaceId} FOR UPDATE`;
  if (!ws || adding === 0) return;
  const [counts] = await tx.$queryRaw<Array<{ active: number; monthly: number }>>`
    SELECT
      (SELECT count(*)::int FROM runs WHERE workspace_id = ${workspaceId} AND status IN ('queued', 'running')) AS active,
      (SELECT count(*)::int FROM runs WHERE workspace_id = ${workspaceId} AND status <> 'skipped'
         AND created_at >= date_trunc('month', now() AT TIME ZONE 'UTC') AT TIME ZONE 'UTC') AS monthly`;
  if (!counts) throw new Error('the run counts query returned no row');
  const { active, monthly } = counts;
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
}

/**
 * Adds the jobs of recorded runs. A Redis failure is logged and swallowed: the runs are already in
 * Postgres and the worker's reconciler adds the job of every queued run that has none.
 */
export async function enqueueRunJobs(db: Db, queue: RunQueue, logger: Logger, runIds: string[]): Promise<void> {
  if (runIds.length === 0) return;
  try {
    // Each job's priority is its run's place in its workspace's line (fair sharing of the workers).
    const positions = await fairPositions(db, runIds);
    // BullMQ waits for a connection that is not ready yet; the client should not wait with it.
    await withTimeout(addRunJobs(queue, runIds, positions), ENQUEUE_TIMEOUT_MS, 'adding run jobs');
  } catch (e) {
    logger.warn('could not add run jobs; the reconciler will add them', { runIds, error: errorMessage(e) });
  }
}
