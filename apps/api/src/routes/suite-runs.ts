import { Router } from 'express';
import type { AppDeps } from '../deps';
import { authOf } from '../middleware/authenticate';
import { listingQuery } from '../services/listing-query';
import { listSuiteRuns } from '../services/listings';
import { getSuiteRun } from '../services/suite-runs';

/** GET /api/v1/suite-runs (a page, newest first) and /api/v1/suite-runs/:suiteRunId. Behind authentication and the rate limit. */
export function createSuiteRunsRouter(deps: AppDeps): Router {
  const router = Router();
  router.get('/', async (req, res) => {
    const query = listingQuery('suite-runs', req.query);
    res.json(await listSuiteRuns(deps.db, deps.keys, deps.config, authOf(res).workspaceId, query, req.query));
  });
  router.get('/:suiteRunId', async (req, res) => {
    const { workspaceId } = authOf(res);
    res.json(await getSuiteRun(deps.db, deps.keys, deps.config, workspaceId, req.params.suiteRunId));
  });
  return router;
}
