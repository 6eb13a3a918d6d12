import { Router } from 'express';
import type { AppDeps } from '../app';
import type { AuthContext } from '../services/auth';
import { getSuiteRun } from '../services/suite-runs';

/** GET /api/v1/suite-runs/:suiteRunId. Mounted behind authentication and the rate limit. */
export function createSuiteRunsRouter(deps: AppDeps): Router {
  const router = Router();
  router.get('/:suiteRunId', async (req, res) => {
    const auth = res.locals.auth as AuthContext;
    res.json(await getSuiteRun(deps.db, deps.keys, deps.config.publicBaseUrl, auth.workspaceId, req.params.suiteRunId));
  });
  return router;
}
