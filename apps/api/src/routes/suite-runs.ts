import { Router } from 'express';
import type { AppDeps } from '../deps';
import { authOf } from '../middleware/authenticate';
import { getSuiteRun } from '../services/suite-runs';

/** GET /api/v1/suite-runs/:suiteRunId. Mounted behind authentication and the rate limit. */
export function createSuiteRunsRouter(deps: AppDeps): Router {
  const router = Router();
  router.get('/:suiteRunId', async (req, res) => {
    const { workspaceId } = authOf(res);
    res.json(await getSuiteRun(deps.db, deps.keys, deps.config, workspaceId, req.params.suiteRunId));
  });
  return router;
}
