import { API_ROUTES } from '@testrun/contracts';
import type { AppDeps } from '../deps';
import { listProjects } from '../services/projects';
import { apiRoute, type ApiRoute } from './builder';
import { secretRoutes } from './secrets';

/** GET /api/v1/projects: what the workspace can run; the projects' secrets. */
export function projectsRoutes(deps: AppDeps): ApiRoute[] {
  return [
    apiRoute(deps, API_ROUTES.listProjects, async ({ workspaceId }) => ({
      body: await listProjects(deps.db, workspaceId),
    })),
    ...secretRoutes(deps, 'project'),
  ];
}
