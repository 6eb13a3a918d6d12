import { Router } from 'express';
import { buildOpenApiDocument, PROBLEMS, type ProblemCode } from '@testrun/contracts';
import { ApiError } from '../errors';

/** What each problem means and what a client should do about it; served at the problem's `type`. */
export const PROBLEM_DESCRIPTIONS: Record<ProblemCode, string> = {
  invalid_body:
    'The request body (or the Idempotency-Key header) breaks a rule; `errors` lists each problem with its JSON Pointer path. Fix the request; retrying it unchanged gives the same answer.',
  both_test_and_project:
    'The body gives both testId and projectSlug. Give testId to run one test, or projectSlug (with an optional suiteSlug) to run a project or one suite.',
  suite_without_project: 'suiteSlug narrows a project to one suite, so it needs projectSlug too.',
  unauthorized:
    'The Authorization header is missing, does not use the Bearer scheme, or carries a key that is malformed, unknown or revoked. The response carries WWW-Authenticate: Bearer.',
  key_paused:
    'The key is paused and its workspace is on the Free plan. An operator resumes it with `testrun admin key resume`, or moves the workspace to a paid plan.',
  key_creator_not_member:
    'The person who created the key has left the workspace, so the key no longer works. Create a new key as a current member.',
  not_found:
    'The run, suite run, test, project or suite does not exist in the workspace of the key (resources of other workspaces are reported exactly like ids that never existed), or the route does not exist.',
  idempotency_request_in_progress:
    'Another request with the same Idempotency-Key is still being handled. Retry after Retry-After seconds to receive its response.',
  payload_too_large: 'The request body is larger than 256 KB.',
  unsupported_media_type: 'The request body is not sent as application/json (UTF-8, no content encoding).',
  plan_limit_exceeded:
    "Enqueuing would pass one of the workspace's plan limits (active runs, or runs this calendar month, UTC); the detail names the limit and the numbers. Nothing was created. Wait for runs to finish, or ask an operator to raise the limit.",
  empty_suite: 'The suite or project has no tests (archived tests do not count). Nothing was created.',
  idempotency_key_reused:
    'The Idempotency-Key was used in the last 24 hours with a different request (method, path or body). Use a new key for a new request.',
  rate_limited:
    'Too many requests: more than the per-key limit per minute (60 by default), or too many requests with a bad key from one address. Wait Retry-After seconds.',
  internal_error:
    'The service failed in a way it did not expect. The failure is logged with the request id (X-Request-Id); retrying may help.',
  service_unavailable:
    'Postgres or Redis cannot be reached right now. Nothing was created by this request; retry after Retry-After seconds.',
};

/** Documents that need no API key: the problem catalogue and the OpenAPI document. */
export function createMetaRouter(publicBaseUrl: string): Router {
  const router = Router();
  const openApi = buildOpenApiDocument(publicBaseUrl);
  router.get('/openapi.json', (_req, res) => {
    res.json(openApi);
  });
  router.get('/problems/:code', (req, res) => {
    const code = req.params.code as ProblemCode;
    if (!Object.hasOwn(PROBLEMS, code)) throw new ApiError('not_found', 'There is no problem type with this code.');
    res.json({
      code,
      status: PROBLEMS[code].status,
      title: PROBLEMS[code].title,
      description: PROBLEM_DESCRIPTIONS[code],
    });
  });
  return router;
}
