import { BUNDLE_ROUTES } from './bundle-routes';
import { DEPLOYMENT_ROUTES } from './deployment-routes';
import { RunListQuery, SuiteRunListQuery, parseListingQuery } from './listings';
import { parseRerunRequest } from './rerun-request';
import { parseRunCreateRequest } from './run-request';
import { declareRoute, pathParams, type ApiSchemaName } from './route-declaration';
import { secretRoutes } from './secret-routes';
import { VISUAL_ROUTES } from './visual-routes';

/**
 * Every HTTP route of the API declared once: method, path, schemas and flags. The API binds a
 * handler to each (apps/api/src/routes/), and the OpenAPI document's paths are built from the same
 * declarations (openapi-paths.ts), so the two cannot tell different stories. Nothing is compiled
 * here: the CLI loads this package and never validates a request.
 */

const operational = (method: 'get', path: string, summary: string) =>
  declareRoute({
    operationId: summary,
    method,
    path,
    summary,
    auth: 'none',
    idempotent: false,
    conditionalGet: false,
    success: { status: 200, description: summary },
    problems: {},
    documented: false,
  });

const createRuns = declareRoute({
  operationId: 'createRuns',
  method: 'post',
  path: '/api/v1/runs',
  summary: 'Enqueue one test, one suite or every suite of a project',
  auth: 'apiKey',
  scope: 'run',
  body: { schema: 'RunCreateRequest', parse: parseRunCreateRequest },
  idempotent: true,
  conditionalGet: false,
  success: {
    status: 201,
    description: 'Runs recorded and enqueued. The body depends on the mode.',
    schema: ['SingleRunCreated', 'SuiteRunCreated', 'ProjectRunsCreated'],
  },
  problems: {
    '400': ['invalid_body', 'both_test_and_project', 'suite_without_project'],
    '404': ['not_found'],
    '409': ['idempotency_request_in_progress'],
    '422': [
      'plan_limit_exceeded',
      'empty_suite',
      'target_not_allowed',
      'idempotency_key_reused',
      'too_many_runs',
      'limit_exceeded',
    ],
  },
  documented: true,
});

/** A listing: one page, newest first, 400 for a bad query, 404 for an unknown project or suite. */
function listing<S extends 'RunList' | 'SuiteRunList'>(operationId: string, path: string, summary: string, schema: S) {
  const kind = schema === 'RunList' ? 'runs' : 'suite-runs';
  return declareRoute({
    operationId,
    method: 'get',
    path,
    summary,
    auth: 'apiKey',
    scope: 'run',
    query: { schema: kind === 'runs' ? RunListQuery : SuiteRunListQuery, parse: (q) => parseListingQuery(kind, q) },
    idempotent: false,
    conditionalGet: false,
    success: { status: 200, description: 'One page, newest first', schema: [schema] },
    problems: { '404': ['not_found'] },
    documented: true,
  });
}

/** A route on one run or suite run: its operation, path, id parameter, summary and schema. */
type OneResource<K extends string, S extends ApiSchemaName> = {
  operationId: string;
  path: string;
  param: K;
  summary: string;
  schema: S;
};

/** A GET of a run or a suite run by its id, conditional and long-pollable. */
function getOne<K extends string, S extends ApiSchemaName>(r: OneResource<K, S>) {
  const { operationId, path, summary } = r;
  return declareRoute({
    operationId,
    method: 'get',
    path,
    summary,
    auth: 'apiKey',
    scope: 'run',
    params: pathParams(r.param),
    idempotent: false,
    conditionalGet: true,
    success: { status: 200, description: summary, schema: [r.schema] },
    problems: { '404': ['not_found'] },
    documented: true,
  });
}

/** A cancel: 202 with the resource as it is right after, 404 for an id of another workspace. */
function cancel<K extends string, S extends ApiSchemaName>(r: OneResource<K, S>) {
  const { operationId, path, summary } = r;
  return declareRoute({
    operationId,
    method: 'post',
    path,
    summary,
    description:
      'Queued runs end `skipped` with skip_reason `cancelled` at once; running runs are stopped by their worker within seconds and end `error` with error.code `cancelled`; terminal runs are left as they are. Safe to repeat. No body.',
    auth: 'apiKey',
    scope: 'run',
    params: pathParams(r.param),
    idempotent: false,
    conditionalGet: false,
    success: {
      status: 202,
      description: 'Cancel accepted; the body is the resource right after it',
      schema: [r.schema],
    },
    problems: { '404': ['not_found'] },
    documented: true,
  });
}

const rerunSuiteRun = declareRoute({
  operationId: 'rerunSuiteRun',
  method: 'post',
  path: '/api/v1/suite-runs/{suiteRunId}/rerun',
  summary: 'Enqueue a new suite run of the failed and error (or all) tests of a finished suite run',
  description:
    "The new suite run names the original in `rerun_of`, and runs against the original's base URL with its headers and variables, taken from a sealed copy the original keeps for 24 hours; after that the request must give them again (422 `rerun_secrets_expired` names each field). Plan limits and Idempotency-Key apply as for POST /api/v1/runs.",
  auth: 'apiKey',
  scope: 'run',
  params: pathParams('suiteRunId'),
  body: { schema: 'SuiteRunRerunRequest', parse: parseRerunRequest },
  idempotent: true,
  conditionalGet: false,
  success: { status: 201, description: 'The new suite run, recorded and enqueued', schema: ['SuiteRunCreated'] },
  problems: {
    '400': ['invalid_body'],
    '404': ['not_found'],
    '409': ['suite_run_not_finished', 'idempotency_request_in_progress'],
    '422': [
      'rerun_secrets_expired',
      'empty_suite',
      'plan_limit_exceeded',
      'target_not_allowed',
      'idempotency_key_reused',
      'limit_exceeded',
    ],
  },
  documented: true,
});

const workspaceSecrets = secretRoutes('workspace');
const projectSecrets = secretRoutes('project');

/** Every route of the API, by the name its handler is bound under. */
export const API_ROUTES = {
  healthz: operational('get', '/healthz', 'healthz'),
  readyz: operational('get', '/readyz', 'readyz'),
  metrics: operational('get', '/metrics', 'metrics'),
  openApiDocument: operational('get', '/api/v1/openapi.json', 'openApiDocument'),
  getProblem: declareRoute({
    operationId: 'getProblem',
    method: 'get',
    path: '/api/v1/problems/{code}',
    summary: 'What a problem code means (needs no API key)',
    auth: 'none',
    params: pathParams('code'),
    idempotent: false,
    conditionalGet: false,
    success: {
      status: 200,
      description: 'What a problem code means (needs no API key)',
      schema: ['ProblemDescription'],
    },
    problems: { '404': ['not_found'] },
    documented: true,
  }),
  listRuns: listing('listRuns', '/api/v1/runs', "List the workspace's runs, newest first", 'RunList'),
  createRuns,
  getRun: getOne({
    operationId: 'getRun',
    path: '/api/v1/runs/{runId}',
    param: 'runId',
    summary: 'Get a run',
    schema: 'Run',
  }),
  cancelRun: cancel({
    operationId: 'cancelRun',
    path: '/api/v1/runs/{runId}/cancel',
    param: 'runId',
    summary: 'Cancel a run',
    schema: 'Run',
  }),
  listSuiteRuns: listing(
    'listSuiteRuns',
    '/api/v1/suite-runs',
    "List the workspace's suite runs, newest first, without their per-test entries",
    'SuiteRunList',
  ),
  getSuiteRun: getOne({
    operationId: 'getSuiteRun',
    path: '/api/v1/suite-runs/{suiteRunId}',
    param: 'suiteRunId',
    summary: 'Get a suite run with its counters and one entry per child test',
    schema: 'SuiteRun',
  }),
  cancelSuiteRun: cancel({
    operationId: 'cancelSuiteRun',
    path: '/api/v1/suite-runs/{suiteRunId}/cancel',
    param: 'suiteRunId',
    summary: 'Cancel every run of a suite run',
    schema: 'SuiteRun',
  }),
  rerunSuiteRun,
  listProjects: declareRoute({
    operationId: 'listProjects',
    method: 'get',
    path: '/api/v1/projects',
    summary: "The workspace's projects with their suites and tests (ids, keys, names, enabled)",
    auth: 'apiKey',
    scope: 'run',
    idempotent: false,
    conditionalGet: false,
    success: { status: 200, description: 'Every project of the workspace, by slug', schema: ['ProjectList'] },
    problems: {},
    documented: true,
  }),
  listWorkspaceSecrets: workspaceSecrets.list,
  setWorkspaceSecret: workspaceSecrets.set,
  deleteWorkspaceSecret: workspaceSecrets.delete,
  listProjectSecrets: projectSecrets.list,
  setProjectSecret: projectSecrets.set,
  deleteProjectSecret: projectSecrets.delete,
  ...DEPLOYMENT_ROUTES,
  ...BUNDLE_ROUTES,
  ...VISUAL_ROUTES,
};
