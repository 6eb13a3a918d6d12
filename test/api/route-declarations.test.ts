// The routes the app serves, their declarations (packages/contracts, api-routes.ts) and the OpenAPI
// document agree route by route: a route added by hand, a declaration left without a handler, or an
// operation of the document without its route (or the other way round) fails here.
import { Router, type Express } from 'express';
import { API_ROUTES, buildOpenApiDocument, operationOf, type RouteDeclaration } from '@testrun/contracts';
import { declarationOf } from '../../apps/api/src/routes/builder';
import { buildTestApi, type TestApi } from './api-harness';

type Layer = {
  rawPath?: unknown;
  route?: { path: string; methods: Record<string, boolean>; stack: { handle: unknown }[] };
  handle: { stack?: Layer[] };
};
type Served = { method: string; path: string; declaration: RouteDeclaration | undefined };
type OpenApi = { paths: Record<string, Record<string, unknown>> };

/** The mounts that are not the JSON API: the detailed view's HTML pages (docs/VIEW.md). */
const NOT_API = new Set(['/view']);

/** Every route the app serves, with the declaration its handler was built from (none when added by hand). */
function servedRoutes(app: Express): Served[] {
  const out: Served[] = [];
  const walk = (stack: Layer[], mount: string) => {
    for (const layer of stack) {
      const at = typeof layer.rawPath === 'string' && layer.rawPath !== '/' ? layer.rawPath : '';
      if (layer.route) {
        const handlers = layer.route.stack;
        const declaration = declarationOf(handlers[handlers.length - 1]?.handle);
        for (const method of Object.keys(layer.route.methods))
          out.push({ method, path: mount + (layer.route.path === '/' ? '' : layer.route.path), declaration });
      } else if (layer.handle.stack && !NOT_API.has(mount + at)) {
        walk(layer.handle.stack, mount + at);
      }
    }
  };
  walk((app as unknown as { router: { stack: Layer[] } }).router.stack, '');
  return out;
}

const expressPath = (path: string) => path.replace(/\{(\w+)\}/g, ':$1');

/** Every way the app, the declarations and the document disagree. */
function drift(app: Express, routes: Record<string, RouteDeclaration>, document: OpenApi): string[] {
  const faults: string[] = [];
  const served = servedRoutes(app);
  for (const s of served) {
    if (!s.declaration) faults.push(`${s.method} ${s.path} is served without a declaration`);
    else if (s.declaration.method !== s.method || expressPath(s.declaration.path) !== s.path)
      faults.push(`${s.method} ${s.path} is served by the handler of ${s.declaration.operationId}`);
  }
  for (const [name, route] of Object.entries(routes)) {
    const count = served.filter((s) => s.declaration === route).length;
    if (count !== 1) faults.push(`${name} is served ${count} times`);
    const operation = document.paths[route.path]?.[route.method];
    if (!route.documented) {
      if (operation) faults.push(`${name} is documented though declared undocumented`);
    } else if (!operation) faults.push(`${name} has no operation in the document`);
    else if (JSON.stringify(operation) !== JSON.stringify(operationOf(route)))
      faults.push(`${name}: the document's operation differs from its declaration`);
  }
  const documented = Object.values(routes).filter((r) => r.documented);
  for (const [path, operations] of Object.entries(document.paths)) {
    for (const method of Object.keys(operations)) {
      if (!documented.some((r) => r.path === path && r.method === method))
        faults.push(`${method} ${path} is documented but not declared`);
    }
  }
  return faults;
}

let api: TestApi;
beforeAll(() => {
  api = buildTestApi();
});
afterAll(async () => {
  await api.close();
});

const document = () => buildOpenApiDocument('/') as OpenApi;

it('serves every declared route once, by its declaration, and documents exactly the documented ones', () => {
  expect(drift(api.app, API_ROUTES, document())).toEqual([]);
  expect(servedRoutes(api.app).filter((s) => s.path.startsWith('/api/'))).toHaveLength(
    Object.values(API_ROUTES).filter((r) => r.path.startsWith('/api/')).length,
  );
});

it('fails on a route added by hand, without its declaration', () => {
  const extra = Router();
  extra.get('/api/v1/extra', (_req, res) => void res.json({}));
  const { stack } = (api.app as unknown as { router: { stack: unknown[] } }).router;
  const added = (extra as unknown as { stack: unknown[] }).stack;
  stack.unshift(...added);
  try {
    expect(drift(api.app, API_ROUTES, document())).toEqual(['get /api/v1/extra is served without a declaration']);
  } finally {
    stack.splice(0, added.length);
  }
});

it('fails on a declaration without its handler, and on an operation without its route', () => {
  const unserved = { ...API_ROUTES.getRun, operationId: 'getRunTwice', path: '/api/v1/runs/{runId}/twice' };
  expect(drift(api.app, { ...API_ROUTES, unserved }, document())).toEqual([
    'unserved is served 0 times',
    'unserved has no operation in the document',
  ]);
  const doc = document();
  doc.paths['/api/v1/runs/{runId}/twice'] = { get: operationOf(unserved) };
  expect(drift(api.app, API_ROUTES, doc)).toEqual(['get /api/v1/runs/{runId}/twice is documented but not declared']);
});

it('fails on an operation that differs from its declaration', () => {
  const doc = document();
  const post = doc.paths['/api/v1/runs']?.post as { parameters: unknown[] };
  post.parameters = [];
  expect(drift(api.app, API_ROUTES, doc)).toEqual([
    "createRuns: the document's operation differs from its declaration",
  ]);
});

it('documents each flag of a declaration: path parameters, query, body, Idempotency-Key, conditional GET, auth and scope', () => {
  const routes: RouteDeclaration[] = Object.values(API_ROUTES);
  for (const route of routes.filter((r) => r.documented)) {
    const op = operationOf(route) as {
      parameters?: { name: string; in: string }[];
      requestBody?: unknown;
      responses: Record<string, unknown>;
      security?: unknown[];
      'x-required-scope'?: string;
    };
    const named = (where: string) => (op.parameters ?? []).filter((p) => p.in === where).map((p) => p.name);
    expect(named('path')).toEqual([...route.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]));
    expect(named('query')).toEqual(Object.keys(route.query?.schema.properties ?? {}));
    expect(named('header').includes('Idempotency-Key')).toBe(route.idempotent);
    expect(named('header').includes('If-None-Match')).toBe(route.conditionalGet);
    expect('304' in op.responses).toBe(route.conditionalGet);
    expect(op.requestBody !== undefined).toBe(route.body !== undefined || route.rawBody !== undefined);
    expect('415' in op.responses).toBe(route.body !== undefined || route.rawBody !== undefined);
    expect('400' in op.responses).toBe(
      route.body !== undefined || route.query !== undefined || route.problems['400'] !== undefined,
    );
    expect('401' in op.responses).toBe(route.auth === 'apiKey');
    // A keyed route's scope: the bearer requirement's role, x-required-scope, and the 403 that refuses it.
    expect(op.security).toEqual(route.auth === 'none' ? [] : [{ bearer: [route.scope] }]);
    expect(op['x-required-scope']).toBe(route.auth === 'none' ? undefined : route.scope);
    expect(JSON.stringify(op.responses['403'] ?? null).includes('insufficient_scope')).toBe(route.auth === 'apiKey');
    expect(String(route.success.status) in op.responses).toBe(true);
    expect('201' in op.responses).toBe(route.success.status === 201 || route.success.created !== undefined);
  }
});
