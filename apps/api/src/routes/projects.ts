import { Router } from 'express';
import type { AppDeps } from '../deps';
import { authOf } from '../middleware/authenticate';
import { listProjects } from '../services/projects';

/** GET /api/v1/projects: what the workspace can run. Mounted behind authentication and the rate limit. */
export function createProjectsRouter(deps: AppDeps): Router {
  const router = Router();
  router.get('/', async (_req, res) => {
    res.json(await listProjects(deps.db, authOf(res).workspaceId));
  });
  return router;
}
