import { API_ROUTES } from '@testrun/contracts';
import { listDeployments, readDeployment } from '@testrun/core/projects';
import type { AppDeps } from '../deps';
import { ApiError } from '../errors';
import { activate, createDeployment, dryRun, type DeploymentContext } from '../services/deployments';
import { listProjects } from '../services/projects';
import { enqueuePolicy } from '../services/target-check';
import { requireScope } from '../scopes';
import { apiRoute, type ApiRoute } from './builder';
import { bundleRoutes } from './bundles';
import { secretRoutes } from './secrets';

/** GET /api/v1/projects: what the workspace can run; a project's deployments, their versions and activation; its secrets. */
export function projectsRoutes(deps: AppDeps): ApiRoute[] {
  const { db } = deps;
  const ctx: DeploymentContext = {
    db,
    discover: deps.discover,
    targetPolicy: enqueuePolicy(deps.config.targetPolicy),
    webhookKey: deps.keys.headers,
    store: deps.store,
  };
  return [
    apiRoute(deps, API_ROUTES.listProjects, async ({ workspaceId }) => ({
      body: await listProjects(db, workspaceId),
    })),

    apiRoute(deps, API_ROUTES.createDeployment, async (context) => {
      const { workspaceId, keyId, params, body, ifMatch, idempotently } = context;
      // Declared `preview` (a preview or a dry run); making it the active version takes `deploy`.
      if (body.activate && !body.dryRun) requireScope(context, 'deploy');
      const input = { workspaceId, projectSlug: params.projectSlug, request: body };
      // A dry run stores nothing: repeating it is harmless, so it needs no Idempotency-Key record.
      if (body.dryRun) return { body: await dryRun(ctx, input), status: 200 };
      return idempotently(
        (keep) => createDeployment(ctx, { ...input, keyId, ifMatch }, keep),
        async () => {},
      );
    }),

    apiRoute(deps, API_ROUTES.listDeployments, async ({ workspaceId, params, query }) => {
      return { body: await listDeployments(db, workspaceId, params.projectSlug, query) };
    }),

    apiRoute(deps, API_ROUTES.getDeployment, async ({ workspaceId, params: { projectSlug, deploymentId } }) => {
      const deployment = await readDeployment(db, workspaceId, projectSlug, deploymentId);
      if (!deployment)
        throw new ApiError(
          'not_found',
          `No deployment "${deploymentId}" of project "${projectSlug}" in this workspace.`,
        );
      return { body: deployment };
    }),

    apiRoute(deps, API_ROUTES.activateDeployment, async ({ workspaceId, params, ifMatch }) => ({
      body: await activate(ctx, { workspaceId, ...params, ifMatch }),
    })),
    ...secretRoutes(deps, 'project'),
    ...bundleRoutes(deps),
  ];
}
