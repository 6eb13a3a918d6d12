import { Router } from 'express';
import { parseRunCreateRequest, type Problem } from '@testrun/contracts';
import { runViewUrl } from '@testrun/core';
import type { AppDeps } from '../app';
import { ApiError, problemBody } from '../errors';
import { jsonBody } from '../middleware/json-body';
import type { AuthContext } from '../services/auth';
import {
  claimIdempotencyKey,
  completeIdempotencyKey,
  hashRequest,
  KEPT_STATUSES,
  readIdempotencyKey,
  releaseIdempotencyKey,
} from '../services/idempotency';
import { createRuns, enqueueRunJobs, getRun } from '../services/runs';

/** POST /api/v1/runs (enqueue) and GET /api/v1/runs/:runId (poll). Mounted behind authentication and the rate limit. */
export function createRunsRouter(deps: AppDeps): Router {
  const { db, keys, queue, logger, config } = deps;
  const router = Router();

  router.post('/', ...jsonBody, async (req, res) => {
    const auth = res.locals.auth as AuthContext;
    const idempotencyKey = readIdempotencyKey(req.get('Idempotency-Key'));
    const parsed = parseRunCreateRequest(req.body);
    if (!parsed.ok) throw new ApiError(parsed.problem.code, parsed.problem.detail, { errors: parsed.problem.errors });
    const input = { workspaceId: auth.workspaceId, request: parsed.value };
    const log = logger.child({ requestId: res.locals.requestId, workspaceId: auth.workspaceId });

    if (!idempotencyKey) {
      const created = await createRuns(db, keys, input);
      await enqueueRunJobs(queue, log, created.queuedRunIds);
      res.status(201).json(created.body);
      return;
    }

    const scope = { workspaceId: auth.workspaceId, key: idempotencyKey };
    const claim = await claimIdempotencyKey(
      db,
      scope,
      hashRequest(keys.idempotency, 'POST', '/api/v1/runs', req.body),
      deps.now(),
    );
    if (claim.kind === 'replay') {
      res.setHeader('Idempotent-Replayed', 'true');
      if (claim.status >= 400) {
        // jsonb keeps no key order: rebuild the problem so the replay has the first response's bytes.
        const kept = claim.body as Problem;
        res
          .status(claim.status)
          .type('application/problem+json')
          .send(JSON.stringify(problemBody(kept.code, kept.detail, kept.errors)));
      } else {
        res.status(claim.status).json(claim.body);
      }
      return;
    }
    let created;
    try {
      created = await createRuns(db, keys, input, (tx, body) =>
        completeIdempotencyKey(tx, scope, claim.lease, 201, body),
      );
    } catch (e) {
      if (e instanceof ApiError && KEPT_STATUSES.has(e.status)) {
        await completeIdempotencyKey(db, scope, claim.lease, e.status, problemBody(e.code, e.detail, e.options.errors));
      } else {
        await releaseIdempotencyKey(db, scope, claim.lease).catch((err: unknown) =>
          log.warn('could not release an idempotency key', { error: (err as Error).message }),
        );
      }
      throw e;
    }
    await enqueueRunJobs(queue, log, created.queuedRunIds);
    res.status(201).json(created.body);
  });

  router.get('/:runId', async (req, res) => {
    const auth = res.locals.auth as AuthContext;
    const run = await getRun(db, auth.workspaceId, req.params.runId);
    // The Run body is exactly the contract's; the link to the page for people travels as a header.
    res.setHeader(
      'Link',
      `<${runViewUrl(config.publicBaseUrl, keys.view, run.id)}>; rel="alternate"; type="text/html"`,
    );
    res.json(run);
  });

  return router;
}
