import { API_ROUTES, isTerminalRunStatus } from '@testrun/contracts';
import { runViewUrl, viewLinkTerms } from '@testrun/core/view-links';
import type { AppDeps } from '../deps';
import { cancelTarget } from '../services/cancel';
import { listRuns } from '../services/listings';
import { runFingerprint } from '../services/long-poll';
import { getRun } from '../services/run-reads';
import { createRuns, enqueueRunJobs } from '../services/runs';
import { enqueuePolicy } from '../services/target-check';
import { approveVisual, issueApprovalLink } from '../services/visual';
import { apiRoute, type ApiRoute } from './builder';

/** POST /api/v1/runs (enqueue), GET /api/v1/runs (a page, newest first), GET /api/v1/runs/:runId (poll), its cancel and its visual approval. */
export function runsRoutes(deps: AppDeps): ApiRoute[] {
  const { db, keys, queue, logger, config } = deps;
  return [
    apiRoute(deps, API_ROUTES.createRuns, ({ workspaceId, scopes, body, requestId, log, idempotently }) =>
      idempotently(
        (keep) =>
          createRuns(
            db,
            keys,
            { workspaceId, request: body, targetPolicy: enqueuePolicy(config.targetPolicy), requestId, scopes },
            keep,
          ),
        (created) => enqueueRunJobs(queue, log, created),
      ),
    ),

    apiRoute(deps, API_ROUTES.listRuns, async ({ workspaceId, query }) => ({
      body: await listRuns(db, workspaceId, query),
    })),

    apiRoute(deps, API_ROUTES.getRun, ({ workspaceId, params: { runId }, conditionally }) =>
      conditionally(
        {
          kind: 'run',
          id: runId,
          workspaceId,
          read: () => getRun(db, workspaceId, runId),
          isFinal: ({ run }) => isTerminalRunStatus(run.status),
          fingerprint: ({ run }) => runFingerprint(run),
          body: ({ run }) => run,
        },
        // The Run body is exactly the contract's; the link to the page for people travels as a header.
        ({ run, link }) => ({
          Link: `<${runViewUrl(config.publicBaseUrl, keys.view, run.id, viewLinkTerms(link))}>; rel="alternate"; type="text/html"`,
        }),
      ),
    ),

    // Cancel: 202 with the run as it is right after (queued: already skipped; running: its worker is told).
    apiRoute(deps, API_ROUTES.cancelRun, async ({ workspaceId, params: { runId } }) => {
      await cancelTarget({ db, redis: deps.redis, redisPrefix: config.redisPrefix, logger }, workspaceId, {
        kind: 'run',
        id: runId,
      });
      return { body: (await getRun(db, workspaceId, runId)).run };
    }),

    apiRoute(deps, API_ROUTES.approveRunVisualChanges, async ({ workspaceId, keyId, scopes, params, body }) => ({
      body: await approveVisual(db, { workspaceId, keyId, scopes }, { run: params.runId }, body.ids),
    })),

    apiRoute(deps, API_ROUTES.issueRunApprovalLink, async ({ workspaceId, keyId, scopes, params }) => ({
      body: await issueApprovalLink(
        { db, keys, publicBaseUrl: config.publicBaseUrl, now: deps.now() },
        { workspaceId, keyId, scopes },
        { run: params.runId },
      ),
    })),
  ];
}
