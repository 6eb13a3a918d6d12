import { Router } from 'express';
import type { AppDeps } from '../deps';
import { ApiError } from '../errors';
import { authOf } from '../middleware/authenticate';
import { jsonBody } from '../middleware/json-body';
import { isTerminalRunStatus, parseRerunRequest } from '@testrun/contracts';
import { cancelTarget } from '../services/cancel';
import { readIdempotencyKey, runIdempotently } from '../services/idempotency';
import { enqueueRunJobs } from '../services/runs';
import { createRerun } from '../services/rerun';
import { enqueuePolicy } from '../services/target-check';
import { listingQuery } from '../services/listing-query';
import { readConditionally } from '../services/conditional-get';
import { suiteRunFingerprint } from '../services/long-poll';
import { clientGone, preferenceApplied } from '../services/long-poll-http';
import { listSuiteRuns } from '../services/listings';
import { getSuiteRun } from '../services/suite-runs';

/** GET /api/v1/suite-runs (a page, newest first) and /api/v1/suite-runs/:suiteRunId. Behind authentication and the rate limit. */
export function createSuiteRunsRouter(deps: AppDeps): Router {
  const router = Router();
  router.get('/', async (req, res) => {
    const query = listingQuery('suite-runs', req.query);
    res.json(await listSuiteRuns(deps.db, deps.keys, deps.config, authOf(res).workspaceId, query));
  });
  router.get('/:suiteRunId', async (req, res) => {
    const { workspaceId } = authOf(res);
    const conditions = { prefer: req.get('Prefer'), ifNoneMatch: req.get('If-None-Match') };
    const { value, applied, etag, notModified } = await readConditionally(deps.watcher, conditions, clientGone(res), {
      kind: 'suite-run',
      id: req.params.suiteRunId,
      workspaceId,
      read: () => getSuiteRun(deps.db, deps.keys, deps.config, workspaceId, req.params.suiteRunId),
      isFinal: (suiteRun) => isTerminalRunStatus(suiteRun.status),
      fingerprint: suiteRunFingerprint,
      body: (suiteRun) => suiteRun,
    });
    preferenceApplied(res, applied);
    res.setHeader('ETag', etag);
    if (notModified) return void res.status(304).end();
    res.json(value);
  });
  // Cancel every child: 202 with the suite run as it is right after (queued children already skipped).
  router.post('/:suiteRunId/cancel', async (req, res) => {
    const { workspaceId } = authOf(res);
    const { suiteRunId } = req.params;
    const { db, redis, config, logger } = deps;
    await cancelTarget({ db, redis, redisPrefix: config.redisPrefix, logger }, workspaceId, {
      kind: 'suite-run',
      id: suiteRunId,
    });
    res.status(202).json(await getSuiteRun(db, deps.keys, config, workspaceId, suiteRunId));
  });
  // Rerun: a new suite run of the failed (or all) children, with Idempotency-Key as POST /api/v1/runs.
  router.post('/:suiteRunId/rerun', ...jsonBody, async (req, res) => {
    const { workspaceId } = authOf(res);
    // Spread middlewares keep Express from typing the params by the path.
    const suiteRunId = String(req.params.suiteRunId);
    const key = readIdempotencyKey(req.get('Idempotency-Key'));
    const parsed = parseRerunRequest(req.body);
    if (!parsed.ok) throw new ApiError(parsed.problem.code, parsed.problem.detail, { errors: parsed.problem.errors });
    const log = deps.logger.child({ requestId: res.locals.requestId, workspaceId });
    const outcome = await runIdempotently(
      { db: deps.db, hashKey: deps.keys.idempotency, now: deps.now(), logger: log },
      { workspaceId, key, method: 'POST', path: `/api/v1/suite-runs/${suiteRunId}/rerun`, body: req.body },
      (keep) =>
        createRerun(
          deps.db,
          deps.keys,
          {
            workspaceId,
            suiteRunId,
            request: parsed.value,
            targetPolicy: enqueuePolicy(deps.config.targetPolicy),
            requestId: res.locals.requestId,
          },
          keep,
        ),
    );
    if (outcome.kind === 'replayed') {
      res.setHeader('Idempotent-Replayed', 'true').status(outcome.status).json(outcome.body);
      return;
    }
    await enqueueRunJobs(deps.queue, log, outcome.value);
    res.status(201).json(outcome.value.body);
  });
  return router;
}
