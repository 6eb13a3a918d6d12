import { Type, type TObject, type TString } from '@sinclair/typebox';
import { DeploymentListQuery, parseDeploymentCreateRequest, parseDeploymentListQuery } from './deployments';
import { RunListQuery, SuiteRunListQuery, parseListingQuery } from './listings';
import { parseRerunRequest } from './rerun-request';
import { parseRunCreateRequest } from './run-request';
import { declareRoute, type ApiSchemaName } from './route-declaration';

/**
 * Every HTTP route of the API declared once: method, path, schemas and flags. The API binds a
 * handler to each (apps/api/src/routes/), and the OpenAPI document's paths are built from the same
 * declarations (openapi-paths.ts), so the two cannot tell different stories. Nothing is compiled
 * here: the CLI loads this package and never validates a request.
 */

/** Path parameters, each a string. */
function pathParams<K extends string>(...names: K[]): TObject<Record<K, TString>> {
  return Type.Object(Object.fromEntries(names.map((n) => [n, Type.String()])) as Record<K, TString>);
}

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
    query: { schema: kind === 'runs' ? RunListQuery : SuiteRunListQuery, parse: (q) => parseListingQuery(kind, q) },
    idempotent: false,
    conditionalGet: false,
    success: { status: 200, description: 'One page, newest first', schema: [schema] },
    problems: { '404': ['not_found'] },
    documented: true,
  });
}

/** A GET of a run or a suite run by its id, conditional and long-pollable. */
function getOne<K extends string, S extends ApiSchemaName>(
  operationId: string,
  path: string,
  param: K,
  summary: string,
  schema: S,
) {
  return declareRoute({
    operationId,
    method: 'get',
    path,
    summary,
    auth: 'apiKey',
    params: pathParams(param),
    idempotent: false,
    conditionalGet: true,
    success: { status: 200, description: summary, schema: [schema] },
    problems: { '404': ['not_found'] },
    documented: true,
  });
}

/** A cancel: 202 with the resource as it is right after, 404 for an id of another workspace. */
function cancel<K extends string, S extends ApiSchemaName>(
  operationId: string,
  path: string,
  param: K,
  summary: string,
  schema: S,
) {
  return declareRoute({
    operationId,
    method: 'post',
    path,
    summary,
    description:
      'Queued runs end `skipped` with skip_reason `cancelled` at once; running runs are stopped by their worker within seconds and end `error` with error.code `cancelled`; terminal runs are left as they are. Safe to repeat. No body.',
    auth: 'apiKey',
    params: pathParams(param),
    idempotent: false,
    conditionalGet: false,
    success: { status: 202, description: 'Cancel accepted; the body is the resource right after it', schema: [schema] },
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

const createDeployment = declareRoute({
  operationId: 'createDeployment',
  method: 'post',
  path: '/api/v1/projects/{projectSlug}/deployments',
  summary: "Deploy a new version of a project's tests (creating the project if it has none)",
  description:
    "Stores the project file as the project's next version and, unless `activate` is false, makes it the active one (what runs without a deploymentId) at once; a preview (`activate: false`) runs only when POST /api/v1/runs names its deploymentId. `dryRun: true` validates and answers the changes (200) without storing anything. A test keeps its testId while its suite slug and key stay the same. An invalid file is 422 `invalid_project` listing every error by JSON pointer, and stores nothing. `If-Match` with the active version (or its id) makes it 412 `precondition_failed` when another deployment was activated meanwhile. Idempotency-Key applies as for POST /api/v1/runs.",
  auth: 'apiKey',
  params: pathParams('projectSlug'),
  body: { schema: 'DeploymentCreateRequest', parse: parseDeploymentCreateRequest },
  idempotent: true,
  ifMatch: true,
  conditionalGet: false,
  success: {
    status: 201,
    description: 'The deployment, stored (and active unless activate was false)',
    schema: ['Deployment'],
  },
  alsoSuccess: { status: 200, description: 'A dry run: the changes, nothing stored', schema: 'DeploymentDryRun' },
  problems: {
    '400': ['invalid_body'],
    '409': ['idempotency_request_in_progress'],
    '412': ['precondition_failed'],
    '422': ['invalid_project', 'limit_exceeded', 'idempotency_key_reused'],
  },
  documented: true,
});

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
  getRun: getOne('getRun', '/api/v1/runs/{runId}', 'runId', 'Get a run', 'Run'),
  cancelRun: cancel('cancelRun', '/api/v1/runs/{runId}/cancel', 'runId', 'Cancel a run', 'Run'),
  listSuiteRuns: listing(
    'listSuiteRuns',
    '/api/v1/suite-runs',
    "List the workspace's suite runs, newest first, without their per-test entries",
    'SuiteRunList',
  ),
  getSuiteRun: getOne(
    'getSuiteRun',
    '/api/v1/suite-runs/{suiteRunId}',
    'suiteRunId',
    'Get a suite run with its counters and one entry per child test',
    'SuiteRun',
  ),
  cancelSuiteRun: cancel(
    'cancelSuiteRun',
    '/api/v1/suite-runs/{suiteRunId}/cancel',
    'suiteRunId',
    'Cancel every run of a suite run',
    'SuiteRun',
  ),
  rerunSuiteRun,
  listProjects: declareRoute({
    operationId: 'listProjects',
    method: 'get',
    path: '/api/v1/projects',
    summary: "The workspace's projects with their suites and tests (ids, keys, names, enabled)",
    auth: 'apiKey',
    idempotent: false,
    conditionalGet: false,
    success: { status: 200, description: 'Every project of the workspace, by slug', schema: ['ProjectList'] },
    problems: {},
    documented: true,
  }),
  createDeployment,
  listDeployments: declareRoute({
    operationId: 'listDeployments',
    method: 'get',
    path: '/api/v1/projects/{projectSlug}/deployments',
    summary: "A project's deployments, newest first, without their tests",
    auth: 'apiKey',
    params: pathParams('projectSlug'),
    query: { schema: DeploymentListQuery, parse: parseDeploymentListQuery },
    idempotent: false,
    conditionalGet: false,
    success: { status: 200, description: 'One page, newest first', schema: ['DeploymentList'] },
    problems: { '404': ['not_found'] },
    documented: true,
  }),
  getDeployment: declareRoute({
    operationId: 'getDeployment',
    method: 'get',
    path: '/api/v1/projects/{projectSlug}/deployments/{deploymentId}',
    summary: 'One deployment of a project, with its tests',
    auth: 'apiKey',
    params: pathParams('projectSlug', 'deploymentId'),
    idempotent: false,
    conditionalGet: false,
    success: { status: 200, description: 'The deployment', schema: ['Deployment'] },
    problems: { '404': ['not_found'] },
    documented: true,
  }),
  activateDeployment: declareRoute({
    operationId: 'activateDeployment',
    method: 'post',
    path: '/api/v1/projects/{projectSlug}/deployments/{deploymentId}/activate',
    summary: 'Make a deployment the active one (a rollback or a promotion)',
    description:
      "Atomically makes the deployment's definitions the project's live tests: runs enqueued from then on without a deploymentId execute it, runs already queued keep the version they were enqueued with. Activating the active deployment changes nothing. `If-Match` as for a deployment. No body.",
    auth: 'apiKey',
    params: pathParams('projectSlug', 'deploymentId'),
    idempotent: false,
    ifMatch: true,
    conditionalGet: false,
    success: { status: 200, description: 'The deployment, now active', schema: ['Deployment'] },
    problems: { '404': ['not_found'], '412': ['precondition_failed'] },
    documented: true,
  }),
};
