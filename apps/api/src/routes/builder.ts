import type { Readable } from 'node:stream';
import { Router, type Request, type RequestHandler, type Response } from 'express';
import {
  compileValidator,
  type ApiKeyScope,
  type RouteBody,
  type RouteDeclaration,
  type RouteParams,
  type RouteQuery,
  type SuccessBody,
} from '@testrun/contracts';
import type { Logger } from '@testrun/core/logger';
import type { AppDeps } from '../deps';
import { apiErrorOf } from '../domain-errors';
import { ApiError } from '../errors';
import { authOf } from '../middleware/authenticate';
import { jsonBody, rawBody } from '../middleware/json-body';
import { readConditionally, type ConditionalRead } from '../services/conditional-get';
import { requireScope } from '../scopes';
import { readIdempotencyKey, runIdempotently, type KeepResponse } from '../services/idempotency';
import { clientGone, preferenceApplied } from '../services/long-poll-http';

/**
 * The one way a route of the API is made: its declaration (packages/contracts, api-routes.ts) and a
 * handler. The builder checks what the declaration names before the handler runs, in the order the
 * contract gives (the key's scope; Idempotency-Key, then the body; the query; the path), with the
 * same problems as ever, and gives the handler the values checked and typed. Idempotency and
 * conditional GET are the builder's too, so a handler says only what to create or read; core's
 * refusals it lets go are mapped to problems in one place (domain-errors.ts).
 */

/** What a handler answers: a JSON body (status by default the declaration's), none (204), plain text, or 304. */
type RouteResult<T = unknown> =
  | { body: T; status?: number; headers?: Record<string, string> }
  | { noContent: true; headers?: Record<string, string> }
  | { text: string; headers: Record<string, string> }
  | { notModified: true; headers: Record<string, string> };

/** What a route's handler is given, typed by its declaration. */
type RouteContext<D extends RouteDeclaration> = {
  params: RouteParams<D>;
  query: RouteQuery<D>;
  body: RouteBody<D>;
  /** The request's bytes, unread (routes declared `rawBody`): the handler reads and checks them. */
  stream: D extends { rawBody: object } ? Readable : undefined;
  /** The workspace of the request's API key (routes declared `auth: 'apiKey'`). */
  workspaceId: D extends { auth: 'apiKey' } ? string : undefined;
  /** The scopes of the request's API key (none on an open route); see {@link requireScope}. */
  scopes: readonly ApiKeyScope[];
  /** The id of the request's API key (routes declared `auth: 'apiKey'`). */
  keyId: D extends { auth: 'apiKey' } ? string : undefined;
  /** The request's `If-Match` (routes declared `ifMatch`), null when absent. */
  ifMatch: string | null;
  requestId: string;
  /** The app's log with the request id (and workspace) on every line. */
  log: Logger;
  /**
   * Runs `create` once per Idempotency-Key (routes declared `idempotent`), then `after` on what it
   * made (never on a replay); answers its `body`, or the kept answer of the first request. The
   * body is not typed by the declaration: the services that create give every mode's union.
   */
  idempotently: <T extends { body: unknown }>(
    create: (keep: KeepResponse | undefined) => Promise<T>,
    after: (created: T) => Promise<void>,
  ) => Promise<RouteResult<SuccessBody<D>>>;
  /**
   * Reads a resource as a conditional GET (routes declared `conditionalGet`): `ETag`, 304 for a
   * matching `If-None-Match`, `Prefer: wait=N`; `headers` adds headers of the value read.
   */
  conditionally: <T>(
    read: ConditionalRead<T> & { body: (value: T) => SuccessBody<D> },
    headers?: (value: T) => Record<string, string>,
  ) => Promise<RouteResult<SuccessBody<D>>>;
};

/**
 * The declared scope's check, before the body is read: after authentication and the per-key rate
 * limit (the mount's), before everything the route looks at, so a key without the scope learns
 * nothing about the resources named (another workspace's project reads as a missing one anyway).
 */
function scopeCheck(scope: ApiKeyScope): RequestHandler {
  return (_req, res, next) => {
    requireScope(authOf(res), scope);
    next();
  };
}

/** A declaration bound to its handler. */
export type ApiRoute = { declaration: RouteDeclaration; handlers: RequestHandler[] };

/** Which declaration each handler the builder made serves: how a test tells a declared route from one added by hand. */
const declared = new WeakMap<RequestHandler, RouteDeclaration>();

/** The declaration a handler of an Express route serves, if the builder made it. */
export function declarationOf(handler: unknown): RouteDeclaration | undefined {
  return typeof handler === 'function' ? declared.get(handler as RequestHandler) : undefined;
}

type Handler<D extends RouteDeclaration> = (
  context: RouteContext<D>,
) => Promise<RouteResult<SuccessBody<D>>> | RouteResult<SuccessBody<D>>;

/** A route: its declaration and a handler of the values it declares. */
export function apiRoute<D extends RouteDeclaration>(deps: AppDeps, declaration: D, handler: Handler<D>): ApiRoute {
  const validParams = declaration.params && compileValidator(declaration.params);
  const handle: RequestHandler = async (req, res) => {
    const auth = declaration.auth === 'apiKey' ? authOf(res) : undefined;
    const workspaceId = auth?.workspaceId;
    const requestId = res.locals.requestId;
    // Read before the body is checked: a bad key is the answer whatever the body.
    const key = declaration.idempotent ? readIdempotencyKey(req.get('Idempotency-Key')) : null;
    const context = {
      params: checkedParams(validParams, req),
      query: checkedQuery(declaration, req),
      body: checkedBody(declaration, req),
      stream: declaration.rawBody ? req : undefined,
      workspaceId,
      scopes: auth?.scopes ?? [],
      keyId: auth?.keyId,
      ifMatch: (declaration.ifMatch && req.get('If-Match')) || null,
      requestId,
      log: deps.logger.child(workspaceId === undefined ? { requestId } : { requestId, workspaceId }),
      idempotently: async <T extends { body: unknown }>(
        create: (keep: KeepResponse | undefined) => Promise<T>,
        after: (created: T) => Promise<void>,
      ): Promise<RouteResult> => {
        if (!declaration.idempotent) throw new Error(`${declaration.operationId} is not declared idempotent`);
        const outcome = await runIdempotently(
          { db: deps.db, hashKey: deps.keys.idempotency, now: deps.now(), logger: context.log },
          { workspaceId: workspaceId ?? '', key, method: 'POST', path: pathOf(declaration, req), body: req.body },
          (keep) => mapped(() => create(keep)),
        );
        if (outcome.kind === 'replayed') {
          return { body: outcome.body, status: outcome.status, headers: { 'Idempotent-Replayed': 'true' } };
        }
        await after(outcome.value);
        return { body: outcome.value.body };
      },
      conditionally: <T>(read: ConditionalRead<T>, headers?: (value: T) => Record<string, string>) => {
        if (!declaration.conditionalGet) throw new Error(`${declaration.operationId} is not a conditional GET`);
        return readConditionalGet(deps, req, res, read, headers);
      },
    } as RouteContext<D>;
    send(res, declaration.success.status, await mapped(() => handler(context)));
  };
  declared.set(handle, declaration);
  const checks = declaration.auth === 'apiKey' ? [scopeCheck(declaration.scope)] : [];
  return {
    declaration,
    handlers: [
      ...checks,
      ...(declaration.body ? jsonBody(declaration.body.maxBytes) : []),
      ...(declaration.rawBody ? [rawBody(declaration.rawBody.mediaType, deps.bundleMaxBytes)] : []),
      handle,
    ],
  };
}

/**
 * What `work` gives, with core's refusals it lets go made the API's problems (domain-errors.ts):
 * around the handler, and around what an idempotent request creates, so a refusal is a problem
 * before the Idempotency-Key record decides whether to keep it (404 and 422 are replayed).
 */
async function mapped<T>(work: () => Promise<T> | T): Promise<T> {
  try {
    return await work();
  } catch (e) {
    throw apiErrorOf(e);
  }
}

/** An Express router of routes whose paths all start with `mount`, where it is to be mounted. */
export function routerOf(mount: string, routes: ApiRoute[]): Router {
  const router = Router();
  for (const { declaration, handlers } of routes) {
    if (!declaration.path.startsWith(mount)) throw new Error(`${declaration.path} is not under ${mount}`);
    const path = declaration.path.slice(mount.length).replace(/\{(\w+)\}/g, ':$1') || '/';
    router[declaration.method](path, ...handlers);
  }
  return router;
}

/** The request's path by the declaration's template, with its parameters as Express decoded them. */
function pathOf(declaration: RouteDeclaration, req: Request): string {
  return declaration.path.replace(/\{(\w+)\}/g, (_, name: string) => String(req.params[name]));
}

function checkedParams(validate: ReturnType<typeof compileValidator> | undefined, req: Request): unknown {
  if (!validate) return {};
  const checked = validate({ ...req.params });
  if (!checked.ok) throw new ApiError('not_found', 'There is no such route.');
  return checked.value;
}

/** The query checked, or 400 `invalid_query` listing every fault with the parameter's path. */
function checkedQuery(declaration: RouteDeclaration, req: Request): unknown {
  if (!declaration.query) return undefined;
  const parsed = declaration.query.parse(req.query);
  if (parsed.ok) return parsed.value;
  const names = [...new Set(parsed.errors.map((e) => e.path.slice(1)))].join(', ');
  throw new ApiError('invalid_query', `The query is invalid (${names}); see errors.`, { errors: parsed.errors });
}

function checkedBody(declaration: RouteDeclaration, req: Request): unknown {
  if (!declaration.body) return undefined;
  const parsed = declaration.body.parse(req.body);
  if (parsed.ok) return parsed.value;
  throw new ApiError(parsed.problem.code, parsed.problem.detail, { errors: parsed.problem.errors });
}

async function readConditionalGet<T>(
  deps: AppDeps,
  req: Request,
  res: Response,
  read: ConditionalRead<T>,
  headersOf?: (value: T) => Record<string, string>,
): Promise<RouteResult> {
  const conditions = { prefer: req.get('Prefer'), ifNoneMatch: req.get('If-None-Match') };
  const { value, applied, etag, notModified } = await readConditionally(
    deps.watcher,
    conditions,
    clientGone(res),
    read,
  );
  preferenceApplied(res, applied);
  const headers = { ETag: etag, ...headersOf?.(value) };
  return notModified ? { notModified: true, headers } : { body: read.body(value), headers };
}

function send(res: Response, status: number, result: RouteResult): void {
  for (const [name, value] of Object.entries(result.headers ?? {})) res.setHeader(name, value);
  if (res.req.method === 'HEAD') return void res.status('status' in result ? (result.status ?? status) : status).end();
  if ('notModified' in result) return void res.status(304).end();
  if ('noContent' in result) return void res.status(204).end();
  if ('text' in result) return void res.status(status).send(result.text);
  res.status(result.status ?? status).json(result.body);
}
