import { DeploymentListQuery, parseDeploymentCreateRequest, parseDeploymentListQuery } from './deployments';
import { declareRoute, pathParams } from './route-declaration';

/**
 * A project's deployments (docs/API.md, "Deployments"): create (a new version, a preview or a dry
 * run), list, read one, activate (a rollback or a promotion).
 */
const createDeployment = declareRoute({
  operationId: 'createDeployment',
  method: 'post',
  path: '/api/v1/projects/{projectSlug}/deployments',
  summary: "Deploy a new version of a project's tests (creating the project if it has none)",
  description:
    "Stores the project file as the project's next version and, unless `activate` is false, makes it the active one (what runs without a deploymentId) at once; a preview (`activate: false`) runs only when POST /api/v1/runs names its deploymentId. `dryRun: true` validates and answers the changes (200) without storing anything. A test keeps its testId while its suite slug and key stay the same. An invalid file is 422 `invalid_project` listing every error by JSON pointer, and stores nothing; a file over a cap (its size, the tests its workspace's plan allows) or a project at its deployments per day is 422 `limit_exceeded` naming the cap and its value, and stores nothing. The body may be up to 2 MiB. `If-Match` with the active version (or its id) makes it 412 `precondition_failed` when another deployment was activated meanwhile. Idempotency-Key applies as for POST /api/v1/runs.",
  auth: 'apiKey',
  scope: 'preview',
  params: pathParams('projectSlug'),
  body: {
    schema: 'DeploymentCreateRequest',
    parse: parseDeploymentCreateRequest,
    maxBytes: 'DEPLOYMENT_LIMITS.maxBodyBytes',
  },
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

export const DEPLOYMENT_ROUTES = {
  createDeployment,
  listDeployments: declareRoute({
    operationId: 'listDeployments',
    method: 'get',
    path: '/api/v1/projects/{projectSlug}/deployments',
    summary: "A project's deployments, newest first, without their tests",
    auth: 'apiKey',
    scope: 'run',
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
    scope: 'run',
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
    scope: 'deploy',
    params: pathParams('projectSlug', 'deploymentId'),
    idempotent: false,
    ifMatch: true,
    conditionalGet: false,
    success: { status: 200, description: 'The deployment, now active', schema: ['Deployment'] },
    problems: { '404': ['not_found'], '412': ['precondition_failed'] },
    documented: true,
  }),
};
