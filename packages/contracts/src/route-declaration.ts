import { Type, type Static, type TObject, type TString } from '@sinclair/typebox';
import { BundleStored } from './bundles';
import { Deployment, DeploymentCreateRequest, DeploymentDryRun, DeploymentList } from './deployments';
import { ProjectList, RunList, SuiteRunList } from './listings';
import { Problem, ProblemDescription, type ProblemCode, type ProblemFieldError } from './problems';
import { SuiteRunRerunRequest } from './rerun-request';
import type { ApiKeyScope } from './scopes';
import { Secret, SecretList, SecretSetRequest } from './secrets';
import { ProjectRunsCreated, Run, RunCreateRequest, SingleRunCreated, SuiteRun, SuiteRunCreated } from './runs';
import { VisualApproval, VisualApprovalLink, VisualApprovalRequest } from './visual';
import { RunFinishedEvent, SuiteRunFinishedEvent } from './webhooks';

// What a declaration of api-routes.ts is, and the types a handler of one is given.

/** The named schemas of the OpenAPI document (its components), which declarations refer to by name. */
export const API_SCHEMAS = {
  RunCreateRequest,
  SingleRunCreated,
  SuiteRunCreated,
  ProjectRunsCreated,
  Run,
  SuiteRun,
  RunList,
  SuiteRunList,
  ProjectList,
  DeploymentCreateRequest,
  Deployment,
  DeploymentDryRun,
  DeploymentList,
  Problem,
  ProblemDescription,
  SuiteRunRerunRequest,
  RunFinishedEvent,
  SuiteRunFinishedEvent,
  SecretSetRequest,
  Secret,
  SecretList,
  BundleStored,
  VisualApprovalRequest,
  VisualApproval,
  VisualApprovalLink,
};
export type ApiSchemaName = keyof typeof API_SCHEMAS;

/** A refused body as a body parser reports it: the problem's code, its detail and every field at fault. */
export type BodyProblem = { code: ProblemCode; detail: string; errors: ProblemFieldError[] };

/**
 * The statuses of problems a declaration lists itself; 401/403/429/503 follow from `auth` (403
 * `insufficient_scope` from `scope`), 413/415 from `body`.
 */
export type DeclaredProblemStatus = '400' | '404' | '409' | '412' | '422';

/** One route. Declared with {@link declareRoute}, it keeps its literal types, which type its handler. */
export type RouteDeclaration = RouteBase & (KeyedRoute | OpenRoute);

/** Behind authentication and the per-key rate limit (401/403/429/503). */
type KeyedRoute = {
  auth: 'apiKey';
  /**
   * The scope the key must hold (403 `insufficient_scope` otherwise), checked after authentication
   * and the rate limit and before anything else of the request. A handler whose need depends on the
   * body asks for more with the builder's `requireScope`.
   */
  scope: ApiKeyScope;
};
/** Open: no key, no scope. */
type OpenRoute = { auth: 'none'; scope?: never };

interface RouteBase {
  operationId: string;
  method: 'get' | 'head' | 'post' | 'put' | 'delete';
  /** The full path in OpenAPI's form: `/api/v1/runs/{runId}`. */
  path: string;
  summary: string;
  description?: string;
  params?: TObject;
  /** The query's schema (the document's parameters) and its full check (400 `invalid_query`). */
  query?: {
    schema: TObject;
    parse: (
      query: Record<string, unknown>,
    ) => { ok: true; value: unknown } | { ok: false; errors: ProblemFieldError[] };
  };
  /** A JSON body (415 of another type, 413 over the size limit): its schema by name and its full check. */
  body?: {
    schema: ApiSchemaName;
    parse: (body: unknown) => { ok: true; value: unknown } | { ok: false; problem: BodyProblem };
    /** The cap on the body's size (413 naming it); `REQUEST_LIMITS.maxBodyBytes` unless given. */
    maxBytes?: 'REQUEST_LIMITS.maxBodyBytes' | 'DEPLOYMENT_LIMITS.maxBodyBytes';
  };
  /**
   * A body of bytes the handler reads as a stream (415 of another media type, 413 over the cap
   * naming it); the handler checks it. A route has `body` or `rawBody`, not both.
   */
  rawBody?: { mediaType: 'application/octet-stream'; maxBytes: 'BUNDLE_LIMITS.maxBytes' };
  /** Honours `Idempotency-Key`: a repeat of the request replays the first answer. */
  idempotent: boolean;
  /** A conditional GET: strong `ETag`, 304 for a matching `If-None-Match`, and `Prefer: wait=N`. */
  conditionalGet: boolean;
  success: {
    /** 204: no body. */
    status: 200 | 201 | 202 | 204;
    description: string;
    /** The body's schema; more than one is a `oneOf`. None: not a documented JSON body. */
    schema?: readonly ApiSchemaName[];
    /** The route answers 201 with the same body when it created the resource (an upsert's PUT): what that means. */
    created?: string;
  };
  /** A second success a request may ask for (a dry run's 200), with its own schema. */
  alsoSuccess?: { status: 200; description: string; schema: ApiSchemaName };
  /** Honours `If-Match` (412 `precondition_failed` when it names another version). */
  ifMatch?: boolean;
  problems: Partial<Record<DeclaredProblemStatus, readonly ProblemCode[]>>;
  /** False for the operational endpoints (health, metrics, the document itself), which the document leaves out. */
  documented: boolean;
}

/** Path parameters of a declaration, each a string. */
export function pathParams<K extends string>(...names: K[]): TObject<Record<K, TString>> {
  return Type.Object(Object.fromEntries(names.map((n) => [n, Type.String()])) as Record<K, TString>);
}

/** The declaration with its literal types kept, so a handler is typed by it. */
export function declareRoute<const D extends RouteDeclaration>(route: D): D {
  return route;
}

/** A route's path parameters, by its declaration. */
export type RouteParams<D> = D extends { params: infer P extends TObject } ? Static<P> : Record<string, never>;
/** A route's query as its check gives it (undefined when it declares none). */
export type RouteQuery<D> = D extends { query: { parse: (query: never) => infer R } } ? Checked<R> : undefined;
/** A route's body as its check gives it (undefined when it declares none). */
export type RouteBody<D> = D extends { body: { parse: (body: never) => infer R } } ? Checked<R> : undefined;
/** The value of a check's success. */
type Checked<R> = R extends { ok: true; value: infer V } ? V : never;
/** The body a route answers with, by the schemas its declaration names (anything when it names none). */
export type SuccessBody<D> =
  | (D extends { success: { schema: readonly (infer N extends ApiSchemaName)[] } }
      ? Static<(typeof API_SCHEMAS)[N]>
      : unknown)
  | (D extends { alsoSuccess: { schema: infer A extends ApiSchemaName } } ? Static<(typeof API_SCHEMAS)[A]> : never);
