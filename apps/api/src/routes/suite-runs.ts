import { API_ROUTES, isTerminalRunStatus } from '@testrun/contracts';
import type { AppDeps } from '../deps';
import { cancelTarget } from '../services/cancel';
import { listSuiteRuns } from '../services/listings';
import { suiteRunFingerprint } from '../services/long-poll';
import { createRerun } from '../services/rerun';
import { enqueueRunJobs } from '../services/runs';
import { getSuiteRun } from '../services/suite-runs';
import { enqueuePolicy } from '../services/target-check';
import { approveVisual, issueApprovalLink } from '../services/visual';
import { apiRoute, type ApiRoute } from './builder';

/** GET /api/v1/suite-runs (a page, newest first), GET /api/v1/suite-runs/:suiteRunId, its cancel, its rerun and its visual approval. */
export function suiteRunsRoutes(deps: AppDeps): ApiRoute[] {
  const { db, keys, config } = deps;
  return [
    apiRoute(deps, API_ROUTES.listSuiteRuns, async ({ workspaceId, query }) => ({
      body: await listSuiteRuns(db, keys, config, workspaceId, query),
    })),

    apiRoute(deps, API_ROUTES.getSuiteRun, ({ workspaceId, params: { suiteRunId }, conditionally }) =>
      conditionally({
        kind: 'suite-run',
        id: suiteRunId,
        workspaceId,
        read: () => getSuiteRun(db, keys, config, workspaceId, suiteRunId),
        isFinal: (suiteRun) => isTerminalRunStatus(suiteRun.status),
        fingerprint: suiteRunFingerprint,
        body: (suiteRun) => suiteRun,
      }),
    ),

    // Cancel every child: 202 with the suite run as it is right after (queued children already skipped).
    apiRoute(deps, API_ROUTES.cancelSuiteRun, async ({ workspaceId, params: { suiteRunId } }) => {
      const { redis, logger } = deps;
      await cancelTarget({ db, redis, redisPrefix: config.redisPrefix, logger }, workspaceId, {
        kind: 'suite-run',
        id: suiteRunId,
      });
      return { body: await getSuiteRun(db, keys, config, workspaceId, suiteRunId) };
    }),

    // Rerun: a new suite run of the failed (or all) children, with Idempotency-Key as POST /api/v1/runs.
    apiRoute(
      deps,
      API_ROUTES.rerunSuiteRun,
      ({ workspaceId, params: { suiteRunId }, body, requestId, log, idempotently }) =>
        idempotently(
          (keep) =>
            createRerun(
              db,
              keys,
              { workspaceId, suiteRunId, request: body, targetPolicy: enqueuePolicy(config.targetPolicy), requestId },
              keep,
            ),
          (created) => enqueueRunJobs(deps.queue, log, created),
        ),
    ),

    apiRoute(deps, API_ROUTES.approveSuiteRunVisualChanges, async ({ workspaceId, keyId, scopes, params, body }) => ({
      body: await approveVisual(db, { workspaceId, keyId, scopes }, { suiteRun: params.suiteRunId }, body.ids),
    })),

    apiRoute(deps, API_ROUTES.issueSuiteRunApprovalLink, async ({ workspaceId, keyId, scopes, params }) => ({
      body: await issueApprovalLink(
        { db, keys, publicBaseUrl: config.publicBaseUrl, now: deps.now() },
        { workspaceId, keyId, scopes },
        { suiteRun: params.suiteRunId },
      ),
    })),
  ];
}
