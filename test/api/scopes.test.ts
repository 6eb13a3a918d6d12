// API key scopes: every declared route against keys of every scope (a key without the route's
// scope is 403 insufficient_scope naming it, a key with it is not), the order of the check
// (after authentication, before anything is looked up), and a change of scopes taking effect on
// the next request as a revocation does.
import express from 'express';
import request from 'supertest';
import {
  API_KEY_SCOPES,
  API_ROUTES,
  buildOpenApiDocument,
  declareRoute,
  type ApiKeyScope,
  type RouteDeclaration,
} from '@testrun/contracts';
import { createLogger } from '@testrun/core/logger';
import type { AppDeps } from '../../apps/api/src';
import { createErrorHandler } from '../../apps/api/src/errors';
import { authenticate } from '../../apps/api/src/middleware/authenticate';
import { requestContext } from '../../apps/api/src/middleware/request-context';
import { apiRoute, routerOf } from '../../apps/api/src/routes/builder';
import { requireScope } from '../../apps/api/src/scopes';
import { applyProject, setApiKeyScopes } from '../../packages/admin/src/operations';
import { createTenant, sampleProject } from '../support/harness';
import { expectProblem } from '../support/problems';
import { bearer, buildTestApi, type TestApi } from './api-harness';

let api: TestApi;
beforeAll(() => {
  api = buildTestApi();
});
afterAll(async () => {
  await api.close();
});

type Keyed = Extract<RouteDeclaration, { auth: 'apiKey' }>;
const keyed = Object.entries(API_ROUTES as Record<string, RouteDeclaration>).filter(
  (entry): entry is [string, Keyed] => entry[1].auth === 'apiKey',
);

/** A request of the route's method to its path (each parameter `x`), with a JSON body when it takes one. */
function call(route: RouteDeclaration, key: string) {
  const path = route.path.replace(/\{\w+\}/g, 'x');
  const req = request(api.app)[route.method](path).set(bearer(key));
  return route.body ? req.send({}) : req;
}

/** The key scope sets that lack `scope`: each narrower ladder, and a set without it written by hand. */
function setsWithout(scope: ApiKeyScope): ApiKeyScope[][] {
  const ladders = API_KEY_SCOPES.map((_, i) => API_KEY_SCOPES.slice(0, i + 1)).filter((s) => !s.includes(scope));
  return [...ladders, API_KEY_SCOPES.filter((s) => s !== scope)];
}

/** A key of its own workspace whose stored scopes are exactly `scopes` (the CHECK allows any non-empty set). */
async function keyWith(scopes: ApiKeyScope[]): Promise<string> {
  const t = await createTenant(api.db);
  await api.db.apiKey.update({ where: { id: t.keyId }, data: { scopes } });
  return t.key;
}

describe('every declared route against every scope', () => {
  it('declares a scope on every keyed route: run on every route that existed before scopes', () => {
    const beyondRun: Record<string, string> = {
      createDeployment: 'preview',
      activateDeployment: 'deploy',
      listWorkspaceSecrets: 'deploy',
      setWorkspaceSecret: 'deploy',
      deleteWorkspaceSecret: 'deploy',
      listProjectSecrets: 'deploy',
      setProjectSecret: 'deploy',
      deleteProjectSecret: 'deploy',
      putBundle: 'preview',
      headBundle: 'preview',
      // A preview's baselines; a change of the active version asks for deploy besides (test/e2e/playwright-visual).
      approveRunVisualChanges: 'preview',
      approveSuiteRunVisualChanges: 'preview',
      // A link that approves as the key: the same scopes (test/view/visual-approve).
      issueRunApprovalLink: 'preview',
      issueSuiteRunApprovalLink: 'preview',
    };
    for (const [name, route] of keyed) {
      expect(API_KEY_SCOPES).toContain(route.scope);
      expect([name, route.scope]).toEqual([name, beyondRun[name] ?? 'run']);
    }
  });

  it.each(keyed)(
    '%s: a key without its scope is 403 insufficient_scope naming it; one with it is not',
    async (_, route) => {
      for (const scopes of setsWithout(route.scope)) {
        const res = await call(route, await keyWith(scopes));
        // A HEAD answer has no body to read the problem from.
        if (route.method === 'head') {
          expect(res.status).toBe(403);
          continue;
        }
        const problem = expectProblem(res, 'insufficient_scope');
        expect(problem.required_scope).toBe(route.scope);
        expect(problem.detail).toContain(`"${route.scope}"`);
        expect(res.headers['www-authenticate']).toBe(`Bearer error="insufficient_scope", scope="${route.scope}"`);
      }
      for (const scopes of [[route.scope], [...API_KEY_SCOPES]]) {
        const res = await call(route, await keyWith(scopes));
        expect(res.status).not.toBe(403);
      }
    },
  );

  it('the document gives each keyed operation its scope and the 403 problem', () => {
    const paths = (buildOpenApiDocument('/') as { paths: Record<string, Record<string, Record<string, unknown>>> })
      .paths;
    for (const [, route] of keyed) {
      const operation = paths[route.path]?.[route.method];
      expect(operation?.security).toEqual([{ bearer: [route.scope] }]);
      expect(operation?.['x-required-scope']).toBe(route.scope);
      expect(JSON.stringify(operation?.responses)).toContain('insufficient_scope');
    }
  });
});

describe('the order of the check', () => {
  it('no key or a bad key is 401 whatever the route needs', async () => {
    const res = await request(api.app).put('/api/v1/secrets/A').send({ value: 'v' });
    expectProblem(res, 'unauthorized');
    expectProblem(await request(api.app).get('/api/v1/secrets').set(bearer('nope')), 'unauthorized');
  });

  it("comes before the project is looked up: another workspace's project, a missing one and a real one read alike", async () => {
    const owner = await createTenant(api.db);
    await applyProject(api.db, owner.workspace.id, sampleProject('shop'));
    const runOnly = await createTenant(api.db);
    await applyProject(api.db, runOnly.workspace.id, sampleProject('own'));
    const answers = await Promise.all(
      ['own', 'shop', 'missing'].map((slug) =>
        request(api.app).put(`/api/v1/projects/${slug}/secrets/TOKEN`).set(bearer(runOnly.key)).send({ value: 'v' }),
      ),
    );
    for (const res of answers) expectProblem(res, 'insufficient_scope');
    expect(new Set(answers.map((r) => JSON.stringify(r.body))).size).toBe(1);
  });

  it('comes before the body is read: a bad body with too little scope is the 403', async () => {
    const t = await createTenant(api.db);
    const res = await request(api.app)
      .put('/api/v1/secrets/A')
      .set(bearer(t.key))
      .set('Content-Type', 'text/plain')
      .send('not json');
    expectProblem(res, 'insufficient_scope');
  });
});

describe('a change of scopes', () => {
  it('takes effect on the next request, as a revocation does, though the key is held in memory', async () => {
    const t = await createTenant(api.db, { scopes: ['deploy'] });
    const list = () => request(api.app).get('/api/v1/secrets').set(bearer(t.key));
    expect((await list()).status).toBe(200);
    expect((await list()).status).toBe(200);
    await setApiKeyScopes(api.db, t.keyId, ['run'], api.announce);
    expectProblem(await list(), 'insufficient_scope');
    await setApiKeyScopes(api.db, t.keyId, ['deploy'], api.announce);
    expect((await list()).status).toBe(200);
  });

  it('a new key and every key made before scopes has run only; deploy brings preview and run', async () => {
    const plain = await createTenant(api.db);
    expect((await api.db.apiKey.findUniqueOrThrow({ where: { id: plain.keyId } })).scopes).toEqual(['run']);
    const wide = await createTenant(api.db, { scopes: ['deploy'] });
    expect((await api.db.apiKey.findUniqueOrThrow({ where: { id: wide.keyId } })).scopes).toEqual([
      'run',
      'preview',
      'deploy',
    ]);
    await expect(api.db.$executeRaw`UPDATE api_keys SET scopes = '{admin}' WHERE id = ${plain.keyId}`).rejects.toThrow(
      /api_keys_scopes_known/,
    );
    await expect(api.db.$executeRaw`UPDATE api_keys SET scopes = '{}' WHERE id = ${plain.keyId}`).rejects.toThrow(
      /api_keys_scopes_known/,
    );
  });
});

describe('requireScope: a scope that depends on the body', () => {
  /** A route as deployments will have it: `preview` to create one inactive, `deploy` to activate it. */
  const probe = declareRoute({
    operationId: 'probe',
    method: 'post',
    path: '/probe',
    summary: 'probe',
    auth: 'apiKey',
    scope: 'run',
    body: { schema: 'SecretSetRequest', parse: (body: unknown) => ({ ok: true, value: body }) },
    idempotent: false,
    conditionalGet: false,
    success: { status: 200, description: 'probe' },
    problems: {},
    documented: false,
  });

  function probeApp() {
    const logger = createLogger({ service: 'api', level: 'error' });
    const deps = { logger } as AppDeps;
    const app = express();
    app.use(requestContext(logger));
    const route = apiRoute(deps, probe, (context) => {
      requireScope(context, (context.body as { activate?: boolean }).activate ? 'deploy' : 'preview');
      return { body: { scopes: context.scopes } };
    });
    const auth = authenticate({
      db: api.db,
      redis: api.redis,
      logger,
      now: () => new Date(),
      redisPrefix: api.config.redisPrefix,
      rateWindowMs: api.config.rateLimitWindowMs,
    });
    app.use('/probe', auth, routerOf('/probe', [route]));
    app.use(createErrorHandler(logger));
    return app;
  }

  it('refuses what the key lacks for this body, and lets through what it holds', async () => {
    const app = probeApp();
    const post = (key: string, body: object) => request(app).post('/probe').set(bearer(key)).send(body);
    const run = await keyWith(['run']);
    const preview = await keyWith(['run', 'preview']);
    const deploy = await keyWith([...API_KEY_SCOPES]);
    expect(expectProblem(await post(run, {}), 'insufficient_scope').required_scope).toBe('preview');
    expect((await post(preview, {})).body).toEqual({ scopes: ['run', 'preview'] });
    expect(expectProblem(await post(preview, { activate: true }), 'insufficient_scope').required_scope).toBe('deploy');
    expect((await post(deploy, { activate: true })).status).toBe(200);
  });
});
