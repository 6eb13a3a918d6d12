import { Router } from 'express';
import type { AppDeps } from '../deps';
import { authOf } from '../middleware/authenticate';
import { isTerminalRunStatus } from '@testrun/contracts';
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
  return router;
}
