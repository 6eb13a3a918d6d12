import { isTerminalRunStatus, type ParsedRerunRequest, type ProblemFieldError } from '@testrun/contracts';
import type { Db } from '@testrun/core/db';
import {
  insertRuns,
  openSuiteRunCopy,
  readRerunChildren,
  readRerunOriginal,
  readSealedFields,
  type PlannedTest,
  type RerunOriginal,
} from '@testrun/core/runs';
import type { DerivedKeys, RunVariables } from '@testrun/core/secrets';
import type { TargetPolicy } from '@testrun/core/target-policy';
import { runnableDeployment } from '@testrun/core/projects';
import { ApiError } from '../errors';
import { checkPlanLimits, type CreatedRuns, type InTransaction } from './runs';
import { checkRunTarget } from './target-check';

export type RerunInput = {
  workspaceId: string;
  suiteRunId: string;
  request: ParsedRerunRequest;
  /** The deployment's target network policy, checked again: it may have changed since the original. */
  targetPolicy: TargetPolicy;
  requestId?: string;
};

/**
 * Records a new suite run of the same suite that runs again the original's failed and error children
 * (`only: "failed"`) or all of them, against the original's base URL, with its headers and variables
 * (from the suite run's sealed copy, or from the request), through the same creation code and plan
 * limits as POST /api/v1/runs, all or nothing. 404 for a suite run of another workspace, 409 while
 * the original is still going, 422 when there is nothing to rerun or the copy is gone and the
 * request does not give the fields again. Jobs are added afterwards (enqueueRunJobs).
 */
export async function createRerun(
  db: Db,
  keys: DerivedKeys,
  input: RerunInput,
  inTransaction?: InTransaction,
): Promise<CreatedRuns> {
  const { workspaceId, suiteRunId, request } = input;
  return db.$transaction(
    async (tx) => {
      const original = await readRerunOriginal(tx, workspaceId, suiteRunId);
      if (!original) throw new ApiError('not_found', `No suite run "${suiteRunId}" in this workspace.`);
      if (!isTerminalRunStatus(original.status)) {
        throw new ApiError(
          'suite_run_not_finished',
          `Suite run "${suiteRunId}" is ${original.status}; it can be rerun once all of its runs have ended.`,
        );
      }
      // The rerun executes the deployment the original executed (its project row held like a new request's).
      const deployment = await runnableDeployment(tx, original.project_id, original.deployment_id);
      const fromDeployment = deployment?.fromDeployment ?? false;
      const deploymentId = deployment?.deploymentId ?? null;
      const children = await readRerunChildren(tx, suiteRunId, request.only, fromDeployment ? deploymentId : null);
      const [first] = children;
      if (!first) {
        throw new ApiError('empty_suite', `Suite run "${suiteRunId}" has no runs that ended failed or error to rerun.`);
      }
      const secrets = rerunSecrets(keys, suiteRunId, original, request);
      await checkRunTarget(tx, input.targetPolicy, workspaceId, first.base_url);
      const tests: PlannedTest[] = children.map((c) => ({
        id: c.test_id,
        enabled: c.enabled,
        baseUrl: c.base_url,
        evidence: c.evidence,
        projectEvidence: c.project_evidence,
      }));
      const queuedAhead = await checkPlanLimits(tx, workspaceId, tests.filter((t) => t.enabled).length);
      const created = await insertRuns(tx, {
        workspaceId,
        suiteId: original.suite_id,
        tests,
        baseUrl: first.base_url,
        headers: secrets.headers,
        variables: secrets.variables,
        headersKey: keys.headers,
        requestId: input.requestId,
        rerunOf: suiteRunId,
        deploymentId,
        fromDeployment,
        queuedAhead,
      });
      if (!created.suiteRunId) throw new Error('a rerun creates a suite run');
      const body = { suiteRunId: created.suiteRunId };
      if (inTransaction) await inTransaction(tx, body);
      return { body, runIds: created.runIds, queuedRunIds: created.queuedRunIds, queuedAhead };
    },
    { maxWait: 5_000, timeout: 20_000 },
  );
}

/**
 * The headers and variables of the rerun: each field the request gives wins; any other the original
 * had comes from its sealed copy while that is kept, else it is missing (422 naming every such field).
 */
function rerunSecrets(
  keys: DerivedKeys,
  suiteRunId: string,
  original: RerunOriginal,
  request: ParsedRerunRequest,
): { headers: Record<string, string> | null; variables: RunVariables | null } {
  const had = readSealedFields(original.sealed_fields);
  const copy = original.copy_kept
    ? openSuiteRunCopy(keys.headers, suiteRunId, {
        headersSealed: original.headers_sealed,
        variablesSealed: original.variables_sealed,
      })
    : { headers: null, variables: null };
  const given = { headers: request.headers, variables: request.variables, secretVariables: request.secretVariables };
  const missing: ProblemFieldError[] = had
    .filter((field) => given[field] === null && !original.copy_kept)
    .map((field) => ({
      path: `/${field}`,
      message: `is required: the original suite run had ${field}, and its sealed copy was erased 24 hours after it was created`,
    }));
  if (missing.length > 0) {
    throw new ApiError(
      'rerun_secrets_expired',
      `Suite run "${suiteRunId}" no longer keeps its ${had.join(' and ')}; give ${missing.map((m) => m.path.slice(1)).join(' and ')} again in the rerun request.`,
      { errors: missing },
    );
  }
  const headers = request.headers ?? copy.headers;
  const vars = request.variables ?? copy.variables?.vars ?? {};
  const secrets = request.secretVariables ?? copy.variables?.secrets ?? {};
  const hasVariables = Object.keys(vars).length > 0 || Object.keys(secrets).length > 0;
  return { headers, variables: hasVariables ? { vars, secrets } : null };
}
