import { API_ROUTES } from '@testrun/contracts';
import type { AppDeps } from '../deps';
import { deleteSecret, listSecretsOf, setSecret } from '../services/secrets';
import { apiRoute, type ApiRoute } from './builder';

type Params = Record<string, string | undefined>;

/** The project a secret route names (its `projectSlug`), or null on the workspace's routes. */
const projectOf = (params: Params) => params.projectSlug ?? null;

/** The secret routes of the workspace (`/api/v1/secrets…`) or of its projects (under `/api/v1/projects`). */
export function secretRoutes(deps: AppDeps, of: 'workspace' | 'project'): ApiRoute[] {
  const routes =
    of === 'project'
      ? {
          list: API_ROUTES.listProjectSecrets,
          set: API_ROUTES.setProjectSecret,
          delete: API_ROUTES.deleteProjectSecret,
        }
      : {
          list: API_ROUTES.listWorkspaceSecrets,
          set: API_ROUTES.setWorkspaceSecret,
          delete: API_ROUTES.deleteWorkspaceSecret,
        };
  return [
    apiRoute(deps, routes.list, async ({ workspaceId, params }) => ({
      body: await listSecretsOf(deps.db, workspaceId, projectOf(params)),
    })),
    apiRoute(deps, routes.set, async ({ workspaceId, params, body }) => {
      const target = { workspaceId, projectSlug: projectOf(params), name: params.name ?? '' };
      const { created, secret } = await setSecret(deps.db, deps.keys.headers, target, body.value);
      return { body: secret, status: created ? 201 : 200 };
    }),
    apiRoute(deps, routes.delete, async ({ workspaceId, params }) => {
      await deleteSecret(deps.db, { workspaceId, projectSlug: projectOf(params), name: params.name ?? '' });
      return { noContent: true };
    }),
  ];
}
