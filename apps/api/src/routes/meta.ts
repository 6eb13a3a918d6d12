import { Router } from 'express';
import { buildOpenApiDocument, describeProblem, isProblemCode } from '@testrun/contracts';
import { ApiError } from '../errors';

/** Documents that need no API key: the problem catalogue (from contracts) and the OpenAPI document. */
export function createMetaRouter(publicBaseUrl: string): Router {
  const router = Router();
  const openApi = buildOpenApiDocument(publicBaseUrl);
  router.get('/openapi.json', (_req, res) => {
    res.json(openApi);
  });
  router.get('/problems/:code', (req, res) => {
    const { code } = req.params;
    if (!isProblemCode(code)) throw new ApiError('not_found', 'There is no problem type with this code.');
    res.json(describeProblem(code));
  });
  return router;
}
