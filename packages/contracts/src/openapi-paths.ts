import type { TSchema } from '@sinclair/typebox';
import { API_ROUTES } from './api-routes';
import type { RouteDeclaration } from './route-declaration';
import { IdempotencyKey } from './idempotency-key';
import { PROBLEMS, type ProblemCode } from './problems';

/** Strips TypeBox's symbol keys by a JSON round trip, leaving plain JSON Schema. */
export function plain(schema: TSchema): Record<string, unknown> {
  return JSON.parse(JSON.stringify(schema)) as Record<string, unknown>;
}

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });

/** A problem response listing what each of its codes means. */
function problemResponse(...codes: readonly ProblemCode[]) {
  return {
    description: codes.map((c) => `\`${c}\`: ${PROBLEMS[c].title}`).join('; '),
    content: { 'application/problem+json': { schema: ref('Problem') } },
  };
}

/** What every route behind an API key may answer besides its own. */
const keyed = {
  '401': problemResponse('unauthorized'),
  '403': problemResponse('key_paused', 'key_creator_not_member', 'insufficient_scope'),
  '429': problemResponse('rate_limited'),
  '503': problemResponse('service_unavailable'),
};

/**
 * Who may call a route: none, or a bearer key holding the route's scope. OpenAPI 3.1 lets a
 * non-OAuth requirement list roles; `x-required-scope` says the same for tools that ignore them.
 */
function security(route: RouteDeclaration): Record<string, unknown> {
  if (route.auth === 'none') return { security: [] };
  return { security: [{ bearer: [route.scope] }], 'x-required-scope': route.scope };
}

const etag = { ETag: { description: 'Strong tag of the body', schema: { type: 'string' } } };

const header = (name: string, description: string) => ({
  name,
  in: 'header',
  required: false,
  description,
  schema: { type: 'string' },
});

/**
 * A conditional GET: a strong `ETag` (a hash of the body), 304 for an `If-None-Match` that names it,
 * and `Prefer: wait=N` (long polling; with a matching `If-None-Match`, 304 only after N seconds
 * without a change).
 */
const conditionalHeaders = [
  header('If-None-Match', 'An ETag of an earlier answer: 304 while the body is still that one'),
  header('Prefer', '`wait=N` (N ≤ 60): hold the answer until the resource changes or N seconds pass'),
];

function parameters(route: RouteDeclaration): Record<string, unknown>[] {
  const path = Object.entries(route.params?.properties ?? {}).map(([name, schema]) => ({
    name,
    in: 'path',
    required: true,
    schema: plain(schema),
  }));
  const query = Object.entries(route.query?.schema.properties ?? {}).map(([name, property]) => {
    const { description, ...rest } = plain(property);
    return { name, in: 'query', required: false, description, schema: rest };
  });
  const idempotency = route.idempotent
    ? [{ name: 'Idempotency-Key', in: 'header', required: false, schema: plain(IdempotencyKey) }]
    : [];
  const ifMatch = route.ifMatch
    ? [header('If-Match', 'The version (or `dep_…` id) the caller believes active: 412 if another is')]
    : [];
  return [...path, ...query, ...idempotency, ...ifMatch, ...(route.conditionalGet ? conditionalHeaders : [])];
}

function responses(route: RouteDeclaration): Record<string, unknown> {
  const { status, description, schema = [], created } = route.success;
  const body = schema.length === 1 ? ref(schema[0] as string) : { oneOf: schema.map(ref) };
  const content = status === 204 || schema.length === 0 ? {} : { content: { 'application/json': { schema: body } } };
  const out: Record<string, unknown> = {
    [status]: { description, ...content, ...(route.conditionalGet ? { headers: etag } : {}) },
  };
  if (created !== undefined) out['201'] = { description: created, ...content };
  if (route.alsoSuccess) {
    const also = route.alsoSuccess;
    out[also.status] = { description: also.description, content: { 'application/json': { schema: ref(also.schema) } } };
  }
  for (const [code, codes] of Object.entries(route.problems)) out[code] = problemResponse(...codes);
  if (route.query) out['400'] = problemResponse('invalid_query');
  if (route.body || route.rawBody) {
    out['413'] = problemResponse('payload_too_large');
    out['415'] = problemResponse('unsupported_media_type');
  }
  if (route.conditionalGet) {
    out['304'] = { description: 'Not modified: the body is still the one If-None-Match names', headers: etag };
  }
  return route.auth === 'apiKey' ? { ...out, ...keyed } : out;
}

/** One route's OpenAPI operation. */
export function operationOf(route: RouteDeclaration): Record<string, unknown> {
  const params = parameters(route);
  return {
    operationId: route.operationId,
    summary: route.summary,
    ...(route.description === undefined ? {} : { description: route.description }),
    ...(params.length > 0 ? { parameters: params } : {}),
    ...(route.body
      ? { requestBody: { required: true, content: { 'application/json': { schema: ref(route.body.schema) } } } }
      : {}),
    ...(route.rawBody
      ? {
          requestBody: {
            required: true,
            content: {
              [route.rawBody.mediaType]: { schema: { type: 'string', contentMediaType: 'application/gzip' } },
            },
          },
        }
      : {}),
    responses: responses(route),
    ...security(route),
  };
}

/** The document's `paths`: one operation per documented route, in the order of the declarations. */
export function buildOpenApiPaths(
  routes: Record<string, RouteDeclaration> = API_ROUTES,
): Record<string, Record<string, unknown>> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of Object.values(routes)) {
    if (!route.documented) continue;
    paths[route.path] = { ...paths[route.path], [route.method]: operationOf(route) };
  }
  return paths;
}
