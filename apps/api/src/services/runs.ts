import {
  overCap,
  REQUEST_LIMITS,
  type ApiKeyScope,
  type ParsedRunRequest,
  type RunCreateResponse,
  type RunTarget,
} from '@testrun/contracts';
import type { Db, DbTx } from '@testrun/core/db';
import type { Logger } from '@testrun/core/logger';
import { addRunJobs, type RunQueue } from '@testrun/core/queue';
import { countWorkspaceRuns, insertRuns, positionsAfter, requestedTests } from '@testrun/core/runs';
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
 * (core's requestedTests; 404 when it names nothing there), checks the plan limits with the workspace row locked (422), then writes the suite run and
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
      const { tests, suiteId, deployment } = await requestedTests(tx, workspaceId, request);
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
        workers: request.workers,
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
