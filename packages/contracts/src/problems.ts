import { Type, type Static } from '@sinclair/typebox';
import { StringEnum } from './enums';
import { API_KEY_SCOPES } from './scopes';

type ProblemEntry = {
  status: number;
  title: string;
  /** What the problem means and what a client should do about it; served at the problem's `type`. */
  description: string;
};

/** The problem catalogue: every code the API can answer with, its HTTP status, title and description. */
export const PROBLEMS = {
  invalid_body: {
    status: 400,
    title: 'The request body is invalid',
    description:
      'The request body (or the Idempotency-Key header) breaks a rule; `errors` lists each problem with its JSON Pointer path. Fix the request; retrying it unchanged gives the same answer.',
  },
  both_test_and_project: {
    status: 400,
    title: 'Give either testId or projectSlug, not both',
    description:
      'The body gives both testId and projectSlug. Give testId to run one test, or projectSlug (with an optional suiteSlug) to run a project or one suite.',
  },
  suite_without_project: {
    status: 400,
    title: 'suiteSlug needs projectSlug',
    description: 'suiteSlug narrows a project to one suite, so it needs projectSlug too.',
  },
  invalid_secret_name: {
    status: 400,
    title: 'The secret name is invalid',
    description:
      'A secret is named as steps reference it, `{{secrets.NAME}}`: a letter or _, then letters, digits and _, at most 64 characters. Fix the name in the URL; retrying it unchanged gives the same answer.',
  },
  invalid_query: {
    status: 400,
    title: 'The query string is invalid',
    description:
      'A listing was asked for with a query parameter that breaks a rule: unknown, given twice, a status or instant that is not one, a limit out of range, or a cursor this listing did not give for the same filters. `errors` lists each problem with its path (/name of the parameter). Fix the query; retrying it unchanged gives the same answer.',
  },
  bad_request: {
    status: 400,
    title: 'The request is malformed',
    description:
      'The request itself (its framing, request line, URL, query or headers) cannot be handled: for example a malformed percent-escape in the path, a NUL character or an unpaired surrogate in the URL or a header, or HTTP the server cannot parse. The detail says which. Fix the request; retrying it unchanged gives the same answer.',
  },
  unauthorized: {
    status: 401,
    title: 'A valid API key is required',
    description:
      'The Authorization header is missing, does not use the Bearer scheme, or carries a key that is malformed, unknown or revoked. The response carries WWW-Authenticate: Bearer.',
  },
  key_paused: {
    status: 403,
    title: 'This API key is paused',
    description:
      'The key is paused and its workspace is on the Free plan. An operator resumes it with `testrun admin key resume`, or moves the workspace to a paid plan.',
  },
  key_creator_not_member: {
    status: 403,
    title: "This API key's creator is no longer a member of the workspace",
    description:
      'The person who created the key has left the workspace, so the key no longer works. Create a new key as a current member.',
  },
  insufficient_scope: {
    status: 403,
    title: "The API key's scopes do not allow this",
    description:
      'The key is valid but lacks the scope the request needs: `run` to enqueue, read, cancel, rerun and list; `preview` to create inactive deployments and run them; `deploy` to activate deployments and manage secrets and projects. `required_scope` names the scope needed (and WWW-Authenticate says it too). An operator creates a key with that scope (`testrun admin key create --scopes …`) or widens this one (`testrun admin key set-scopes`). The check comes after authentication and before anything is looked up, so the answer says nothing about the resource named.',
  },
  not_found: {
    status: 404,
    title: 'Not found',
    description:
      'The run, suite run, test, project, suite, deployment or secret does not exist in the workspace of the key (resources of other workspaces are reported exactly like ids that never existed), or the route does not exist.',
  },
  method_not_allowed: {
    status: 405,
    title: 'The method is not allowed here',
    description:
      "The API answers GET and HEAD, POST on /api/v1/runs, on a project's deployments and on the cancel, rerun and activate URLs (POST only there), and PUT and DELETE on the URL of a secret; other methods (including OPTIONS: the API serves no cross-origin requests) get this problem with an Allow header listing the methods the URL accepts.",
  },
  request_timeout: {
    status: 408,
    title: 'The request was not received in time',
    description: 'The request line, headers or body did not arrive in time. Send the request again.',
  },
  idempotency_request_in_progress: {
    status: 409,
    title: 'A request with this Idempotency-Key is still being handled',
    description:
      'Another request with the same Idempotency-Key is still being handled. Retry after Retry-After seconds to receive its response.',
  },
  suite_run_not_finished: {
    status: 409,
    title: 'The suite run has not finished',
    description:
      'A suite run is rerun once every one of its runs has ended. Wait for it to finish (or cancel it), then ask again.',
  },
  precondition_failed: {
    status: 412,
    title: 'Another deployment was activated meanwhile',
    description:
      "The request's If-Match names a version of the project (its number, as the deployment's `version`, or its `dep_…` id) that is no longer the active one: another deployment was activated since it was read. Nothing was stored. Read the project's deployments again, then decide.",
  },
  payload_too_large: {
    status: 413,
    title: 'The request body is too large',
    description:
      'The request body is larger than 256 KB (2 MiB for a deployment, 50 MiB for a Playwright bundle, or 256 MiB for a bundle unpacked: `BUNDLE_LIMITS.maxUnpackedBytes`, counted as it is inflated and stopped there).',
  },
  expectation_failed: {
    status: 417,
    title: 'The Expect header cannot be met',
    description: 'The request carries an Expect header other than `100-continue`. Send it without that header.',
  },
  unsupported_media_type: {
    status: 415,
    title: 'The request body must be application/json',
    description: 'The request body is not sent as application/json (UTF-8, no content encoding).',
  },
  invalid_project: {
    status: 422,
    title: 'The project file is invalid',
    description:
      "The project file of a deployment breaks a rule of its schema, or a rule no schema states (unique suite slugs and test keys, its slug the same as the path's, a base URL or webhook URL the network policy allows). `errors` lists every problem with its JSON Pointer path under /project. Nothing was stored. Fix the file.",
  },
  invalid_bundle: {
    status: 422,
    title: 'The bundle is not the one named, or not a bundle the service accepts',
    description:
      "The bytes of PUT …/bundles/{digest} do not have the digest the path names (`sha256:` and the SHA-256 of the bytes), or they are not a gzip'd tar with `testrun-bundle.json` at its root, or they hold more than `BUNDLE_LIMITS.maxFiles` files and folders, an entry that is not a regular file or folder at a plain relative path (a link, a device, `..`), or a package the service provides (`@playwright/test`, `playwright`, `playwright-core`); a deployment's, when the worker refuses its bundle for one of these (`errors` names `/bundle`). The detail says which. Nothing was stored. Pack it again with `testrun deploy` and upload the bytes unchanged.",
  },
  plan_limit_exceeded: {
    status: 422,
    title: "The run would exceed the workspace's plan limits",
    description:
      "Enqueuing would pass one of the workspace's plan limits (active runs, or runs this calendar month, UTC); the detail names the limit and the numbers. Nothing was created. Wait for runs to finish, or ask an operator to raise the limit.",
  },
  empty_suite: {
    status: 422,
    title: 'There are no tests to run',
    description:
      'The suite or project has no tests (archived tests do not count), or a rerun with `only: "failed"` found no child that ended failed or error. Nothing was created.',
  },
  target_not_allowed: {
    status: 422,
    title: "The run's target is not allowed by the network policy",
    description:
      "The base URL (the request's `baseUrl`, else the project's) names a target the deployment's network policy refuses: a private, loopback or link-local address, a cloud metadata endpoint, one of the deployment's own services, a port browsers refuse, a scheme other than http(s), or a host an operator or the workspace denied. The detail names the host and the rule. Nothing was created. Point the run at a public target, or ask an operator to allow it (TARGET_ALLOW).",
  },
  rerun_secrets_expired: {
    status: 422,
    title: "The suite run's headers or variables are no longer kept",
    description:
      "A rerun sends the original suite run's headers and variables again from a sealed copy the suite run keeps for 24 hours. That copy is erased, and the original had some: `errors` names each field (`/headers`, `/variables`, `/secretVariables`) the rerun request must give again. Nothing was created.",
  },
  idempotency_key_reused: {
    status: 422,
    title: 'This Idempotency-Key was used with a different request',
    description:
      'The Idempotency-Key was used in the last 24 hours with a different request (method, path or body). Use a new key for a new request.',
  },
  too_many_runs: {
    status: 422,
    title: 'The request would create too many runs',
    description:
      'One POST /api/v1/runs may create at most a fixed number of runs (the detail names the cap and the count). Nothing was created. Run the project suite by suite.',
  },
  limit_exceeded: {
    status: 422,
    title: 'The request is over a limit',
    description:
      'A value of the body is over one of the fixed limits (`headers`: how many, name and value length, total size; `variables` and `secretVariables`: how many, value length, total size). `errors` lists each with its JSON Pointer path, and every message names the limit and its value. Nothing was created. Send less.',
  },
  rate_limited: {
    status: 429,
    title: 'Too many requests',
    description:
      'Too many requests: more than the per-key limit per minute (every authenticated response states it in its RateLimit-Policy header), or too many requests with a bad key from one address. Wait Retry-After seconds.',
  },
  request_header_fields_too_large: {
    status: 431,
    title: 'The request headers are too large',
    description:
      'The request line and headers are larger than the server accepts, or there are too many header fields; the detail names the limit.',
  },
  internal_error: {
    status: 500,
    title: 'Internal error',
    description:
      'The service failed in a way it did not expect. The failure is logged with the request id (X-Request-Id); retrying may help.',
  },
  discovery_unavailable: {
    status: 503,
    title: 'No worker listed the Playwright tests in time',
    description:
      "A deployment with Playwright tests is discovered in a worker's sandbox, and no worker answered within the wait (none running, or all busy), or the worker's discovery failed, or it could not extract the bundle (its disk full); the detail says which. Nothing was stored; retry later.",
  },
  service_unavailable: {
    status: 503,
    title: 'The service is temporarily unavailable',
    description:
      'Postgres or Redis cannot be reached right now. Nothing was created by this request; retry after Retry-After seconds.',
  },
} as const satisfies Record<string, ProblemEntry>;

export type ProblemCode = keyof typeof PROBLEMS;

/** Every problem code, in catalogue order. */
export const PROBLEM_CODES = Object.keys(PROBLEMS).filter(isProblemCode);

export function isProblemCode(value: string): value is ProblemCode {
  return Object.hasOwn(PROBLEMS, value);
}

/** The `type` URI of a problem: a relative reference that the API serves as documentation. */
export function problemType(code: ProblemCode): string {
  return `/api/v1/problems/${code}`;
}

export const ProblemFieldError = Type.Object(
  {
    path: Type.String({ description: 'JSON Pointer to the offending part of the body ("" for the body itself).' }),
    message: Type.String(),
  },
  { additionalProperties: false },
);
export type ProblemFieldError = Static<typeof ProblemFieldError>;

/** RFC 9457 problem details, served as application/problem+json. */
export const Problem = Type.Object(
  {
    type: Type.String(),
    title: Type.String(),
    status: Type.Integer(),
    detail: Type.String(),
    code: StringEnum(PROBLEM_CODES),
    errors: Type.Optional(Type.Array(ProblemFieldError)),
    required_scope: Type.Optional(
      StringEnum(API_KEY_SCOPES, { description: 'Of `insufficient_scope`: the scope the request needs.' }),
    ),
  },
  { additionalProperties: false },
);
export type Problem = Static<typeof Problem>;

/** The document served at a problem's `type`: what the code means, for people and tools. */
export const ProblemDescription = Type.Object(
  {
    code: StringEnum(PROBLEM_CODES),
    status: Type.Integer(),
    title: Type.String(),
    description: Type.String(),
  },
  { additionalProperties: false },
);
export type ProblemDescription = Static<typeof ProblemDescription>;

/** The catalogue entry of `code` as served at its `type`. */
export function describeProblem(code: ProblemCode): ProblemDescription {
  const { status, title, description } = PROBLEMS[code];
  return { code, status, title, description };
}
