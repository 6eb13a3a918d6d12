import { API_ROUTES } from '@testrun/contracts';
import type { AppDeps } from '../deps';
import { headBundle, putBundle } from '../services/bundles';
import { apiRoute, type ApiRoute } from './builder';

/** PUT and HEAD /api/v1/projects/{projectSlug}/bundles/{digest}: a workspace's Playwright bundles. */
export function bundleRoutes(deps: AppDeps): ApiRoute[] {
  return [
    apiRoute(deps, API_ROUTES.headBundle, ({ workspaceId, params }) =>
      headBundle(deps.store, workspaceId, params.digest),
    ),
    apiRoute(deps, API_ROUTES.putBundle, ({ workspaceId, params, stream }) =>
      putBundle(deps.store, deps.db, {
        workspaceId,
        digest: params.digest,
        body: stream,
        maxBytes: deps.bundleMaxBytes,
        caps: deps.bundleCaps,
      }),
    ),
  ];
}
