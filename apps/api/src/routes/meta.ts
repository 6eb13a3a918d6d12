import { API_ROUTES, buildOpenApiDocument, describeProblem, isProblemCode } from '@testrun/contracts';
import type { AppDeps } from '../deps';
import { ApiError } from '../errors';
import { apiRoute, type ApiRoute } from './builder';

/** Documents that need no API key: the problem catalogue (from contracts) and the OpenAPI document. */
export function metaRoutes(deps: AppDeps): ApiRoute[] {
  const openApi = buildOpenApiDocument(deps.config.publicBaseUrl);
  return [
    apiRoute(deps, API_ROUTES.openApiDocument, () => ({ body: openApi })),
    apiRoute(deps, API_ROUTES.getProblem, ({ params: { code } }) => {
      if (!isProblemCode(code)) throw new ApiError('not_found', 'There is no problem type with this code.');
      return { body: describeProblem(code) };
    }),
  ];
}
