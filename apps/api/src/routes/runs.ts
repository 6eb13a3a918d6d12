import { Router } from 'express';
import { isTerminalRunStatus, parseRunCreateRequest } from '@testrun/contracts';
import { runViewUrl, viewLinkTerms } from '@testrun/core/view-links';
import type { AppDeps } from '../deps';
import { ApiError } from '../errors';
import { authOf } from '../middleware/authenticate';
import { jsonBody } from '../middleware/json-body';
import { readIdempotencyKey, runIdempotently } from '../services/idempotency';
import { listingQuery } from '../services/listing-query';
import { listRuns } from '../services/listings';
import { clientGone, preferenceApplied } from '../services/long-poll-http';
import { readConditionally } from '../services/conditional-get';
import { runFingerprint } from '../services/long-poll';
import { cancelTarget } from '../services/cancel';
import { getRun } from '../services/run-reads';
import { createRuns, enqueueRunJobs } from '../services/runs';
import { enqueuePolicy } from '../services/target-check';

/** POST /api/v1/runs (enqueue), GET /api/v1/runs (a page, newest first) and GET /api/v1/runs/:runId (poll). Mounted behind authentication and the rate limit. */
export function createRunsRouter(deps: AppDeps): Router {
  const { db, keys, queue, logger, config } = deps;
  const router = Router();

  router.post('/', ...jsonBody, async (req, res) => {
    const { workspaceId } = authOf(res);
    const key = readIdempotencyKey(req.get('Idempotency-Key'));
    const parsed = parseRunCreateRequest(req.body);
    if (!parsed.ok) throw new ApiError(parsed.problem.code, parsed.problem.detail, { errors: parsed.problem.errors });
    const log = logger.child({ requestId: res.locals.requestId, workspaceId });

    const outcome = await runIdempotently(
      { db, hashKey: keys.idempotency, now: deps.now(), logger: log },
      { workspaceId, key, method: 'POST', path: '/api/v1/runs', body: req.body },
      (keep) =>
        createRuns(
          db,
          keys,
          {
            workspaceId,
            request: parsed.value,
            targetPolicy: enqueuePolicy(config.targetPolicy),
            requestId: res.locals.requestId,
          },
          keep,
        ),
    );
    if (outcome.kind === 'replayed') {
      res.setHeader('Idempotent-Replayed', 'true').status(outcome.status).json(outcome.body);
      return;
    }
    await enqueueRunJobs(queue, log, outcome.value);
    res.status(201).json(outcome.value.body);
  });

  router.get('/', async (req, res) => {
    const query = listingQuery('runs', req.query);
    res.json(await listRuns(db, authOf(res).workspaceId, query));
  });

  router.get('/:runId', async (req, res) => {
    const { workspaceId } = authOf(res);
    const conditions = { prefer: req.get('Prefer'), ifNoneMatch: req.get('If-None-Match') };
    const { value, applied, etag, notModified } = await readConditionally(deps.watcher, conditions, clientGone(res), {
      kind: 'run',
      id: req.params.runId,
      workspaceId,
      read: () => getRun(db, workspaceId, req.params.runId),
      isFinal: ({ run }) => isTerminalRunStatus(run.status),
      fingerprint: ({ run }) => runFingerprint(run),
      body: ({ run }) => run,
    });
    const { run, link } = value;
    preferenceApplied(res, applied);
    res.setHeader('ETag', etag);
    // The Run body is exactly the contract's; the link to the page for people travels as a header.
    res.setHeader(
      'Link',
      `<${runViewUrl(config.publicBaseUrl, keys.view, run.id, viewLinkTerms(link))}>; rel="alternate"; type="text/html"`,
    );
    if (notModified) return void res.status(304).end();
    res.json(run);
  });

  // Cancel: 202 with the run as it is right after (queued: already skipped; running: its worker is told).
  router.post('/:runId/cancel', async (req, res) => {
    const { workspaceId } = authOf(res);
    const { runId } = req.params;
    await cancelTarget({ db, redis: deps.redis, redisPrefix: config.redisPrefix, logger }, workspaceId, {
      kind: 'run',
      id: runId,
    });
    res.status(202).json((await getRun(db, workspaceId, runId)).run);
  });

  return router;
}
