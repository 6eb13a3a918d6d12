// Over 300 lines on purpose: one case per problem code of POST and GET, all on one API instance and
// its tenants; the cases read as the catalogue of errors, in its order.
import request from 'supertest';
import { createServer } from 'node:net';
import { applyProject } from '../../packages/admin/src/operations';
import { LocalArtifactStore } from '@testrun/core/artifact-store';
import { createPrisma, type Db } from '@testrun/core/db';
import { createLogger } from '@testrun/core/logger';
import { dropDatabase, ensureDatabase, migrateDatabase } from '@testrun/core/migrate';
import { createRunQueue } from '@testrun/core/queue';
import { deriveKeys } from '@testrun/core/secrets';
import { compileValidator, PROBLEM_CODES, PROBLEMS, problemType, ProblemDescription } from '@testrun/contracts';
import { createApiRedis, createApp } from '../../apps/api/src';
import { createTenant, sampleProject } from '../support/harness';
import { bearer, buildTestApi, type TestApi } from './api-harness';
import { expectProblem } from '../support/problems';
import { anyString, bodyOf, nth, wire } from './typed';

let api: TestApi;
beforeAll(() => {
  api = buildTestApi();
});
afterAll(async () => {
  await api.close();
});

const countRuns = (db: Db, workspaceId: string) => db.run.count({ where: { workspaceId } });
const countSuiteRuns = (db: Db, workspaceId: string) => db.suiteRun.count({ where: { workspaceId } });

async function tenant(opts: Parameters<typeof sampleProject>[1] = {}, plan: Parameters<typeof createTenant>[1] = {}) {
  const t = await createTenant(api.db, plan);
  const applied = await applyProject(api.db, t.workspace.id, sampleProject('shop', opts));
  return {
    ...t,
    applied,
    firstTestId: nth(nth(applied.suites, 0).tests, 0).id,
    post: (body: unknown) =>
      request(api.app)
        .post('/api/v1/runs')
        .set(bearer(t.key))
        .send(body as object),
  };
}

describe('rules 1–3: 400 and nothing created', () => {
  let t: Awaited<ReturnType<typeof tenant>>;
  beforeAll(async () => {
    t = await tenant();
  });
  afterEach(async () => {
    expect(await countRuns(api.db, t.workspace.id)).toBe(0);
  });

  it('rule 1: both testId and projectSlug', async () => {
    const p = expectProblem(await t.post({ testId: 'tst_x', projectSlug: 'shop' }), 'both_test_and_project');
    expect(p.errors).toEqual([{ path: '/testId', message: anyString() }]);
  });

  it('rule 2: suiteSlug without projectSlug', async () => {
    expectProblem(await t.post({ suiteSlug: 'smoke' }), 'suite_without_project');
    expectProblem(await t.post({ testId: t.firstTestId, suiteSlug: 'smoke' }), 'suite_without_project');
  });

  it.each([
    ['unknown field', { projectSlug: 'shop', extra: 1 }, '/extra'],
    ['neither testId nor projectSlug', { baseUrl: 'https://a.example' }, ''],
    ['wrong type', { projectSlug: 42 }, '/projectSlug'],
    ['empty slug', { projectSlug: '' }, '/projectSlug'],
    ['relative baseUrl', { projectSlug: 'shop', baseUrl: '/preview' }, '/baseUrl'],
    ['ftp baseUrl', { projectSlug: 'shop', baseUrl: 'ftp://a.example' }, '/baseUrl'],
    ['baseUrl with credentials', { projectSlug: 'shop', baseUrl: 'https://u:p@a.example' }, '/baseUrl'],
    ['headers not an object', { projectSlug: 'shop', headers: ['a'] }, '/headers'],
    ['header value not a string', { projectSlug: 'shop', headers: { 'x-a': 1 } }, '/headers/x-a'],
    ['header value with CR/LF', { projectSlug: 'shop', headers: { 'x-a': 'a\r\nInjected: 1' } }, '/headers/x-a'],
    ['header name not a token', { projectSlug: 'shop', headers: { 'bad name': 'v' } }, '/headers/bad name'],
    ['Host header', { projectSlug: 'shop', headers: { Host: 'evil.example' } }, '/headers/Host'],
    ['hop-by-hop header', { projectSlug: 'shop', headers: { Connection: 'close' } }, '/headers/Connection'],
    ['Content-Length header', { projectSlug: 'shop', headers: { 'content-length': '1' } }, '/headers/content-length'],
    ['body is an array', [{ projectSlug: 'shop' }], ''],
  ])('rule 3: %s', async (_name, body, path) => {
    const p = expectProblem(await t.post(body), 'invalid_body');
    expect(p.errors?.map((e) => e.path)).toContain(path);
  });

  it('lists every problem of a body at once', async () => {
    const p = expectProblem(
      await t.post({ projectSlug: 'shop', baseUrl: 'nope', extra: true, headers: { Host: 'x' } }),
      'invalid_body',
    );
    expect(p.errors?.map((e) => e.path).sort()).toEqual(['/baseUrl', '/extra', '/headers/Host']);
  });

  it('malformed JSON is 400 invalid_body', async () => {
    const res = await request(api.app)
      .post('/api/v1/runs')
      .set(bearer(t.key))
      .set('Content-Type', 'application/json')
      .send('{"projectSlug": ');
    expectProblem(res, 'invalid_body');
  });

  it('no body at all is 400 invalid_body', async () => {
    expectProblem(await request(api.app).post('/api/v1/runs').set(bearer(t.key)), 'invalid_body');
  });

  it('another media type is 415', async () => {
    const res = await request(api.app)
      .post('/api/v1/runs')
      .set(bearer(t.key))
      .set('Content-Type', 'text/plain')
      .send('projectSlug=shop');
    expectProblem(res, 'unsupported_media_type');
  });

  it('a body over 256 KB is 413', async () => {
    const res = await request(api.app)
      .post('/api/v1/runs')
      .set(bearer(t.key))
      .send({ projectSlug: 'shop', pad: 'x'.repeat(300 * 1024) });
    expectProblem(res, 'payload_too_large');
  });

  it.each([
    ['empty', ''],
    ['too long', 'k'.repeat(256)],
    ['with a space', 'a b'],
    ['non-ASCII', 'clé'],
  ])('an Idempotency-Key %s is 400 naming the header', async (_n, key) => {
    const res = await request(api.app)
      .post('/api/v1/runs')
      .set(bearer(t.key))
      .set('Idempotency-Key', key)
      .send({ projectSlug: 'shop' });
    const p = expectProblem(res, 'invalid_body');
    expect(p.detail).toContain('Idempotency-Key');
  });
});

describe("rule 4: 404 in the key's workspace", () => {
  it('unknown project, unknown suite, unknown test, archived test and archived suite', async () => {
    const t = await tenant({ count: 2, suites: ['smoke', 'old'] });
    const archivedTest = nth(nth(t.applied.suites, 0).tests, 1).id;
    const file = sampleProject('shop', { count: 1, suites: ['smoke'] });
    await applyProject(api.db, t.workspace.id, file);
    expect(expectProblem(await t.post({ projectSlug: 'nope' }), 'not_found').detail).toContain('"nope"');
    expect(expectProblem(await t.post({ projectSlug: 'shop', suiteSlug: 'nope' }), 'not_found').detail).toContain(
      '"nope"',
    );
    expectProblem(await t.post({ projectSlug: 'shop', suiteSlug: 'old' }), 'not_found');
    expectProblem(await t.post({ testId: 'tst_doesnotexist' }), 'not_found');
    expectProblem(await t.post({ testId: archivedTest }), 'not_found');
    expect(await countRuns(api.db, t.workspace.id)).toBe(0);
  });

  it('404 wins over 422: an unknown suite in a workspace at its limit', async () => {
    const t = await tenant({ count: 1 }, { maxActiveRuns: 0 });
    expectProblem(await t.post({ projectSlug: 'shop', suiteSlug: 'nope' }), 'not_found');
  });
});

describe('rule 5: 422 and nothing created', () => {
  it('a suite with no tests is empty_suite, and so is a project whose tests are all archived', async () => {
    const t = await tenant({ count: 1 });
    await applyProject(api.db, t.workspace.id, {
      ...sampleProject('shop'),
      suites: [{ slug: 'smoke', name: 'Smoke', tests: [] }],
    });
    expectProblem(await t.post({ projectSlug: 'shop', suiteSlug: 'smoke' }), 'empty_suite');
    expectProblem(await t.post({ projectSlug: 'shop' }), 'empty_suite');
    expect(await countRuns(api.db, t.workspace.id)).toBe(0);
    expect(await countSuiteRuns(api.db, t.workspace.id)).toBe(0);
  });

  it('active-runs limit: a suite that would pass it creates nothing, not even part of the suite', async () => {
    const t = await tenant({ count: 3 }, { maxActiveRuns: 4 });
    expect((await t.post({ projectSlug: 'shop', suiteSlug: 'smoke' })).status).toBe(201);
    const before = await api.queue.getJobCounts('waiting');
    const p = expectProblem(await t.post({ projectSlug: 'shop', suiteSlug: 'smoke' }), 'plan_limit_exceeded');
    expect(p.detail).toContain('active runs');
    expect(p.detail).toMatch(/at most 4 .*3 are.*add 3/);
    expect(await countRuns(api.db, t.workspace.id)).toBe(3);
    expect(await countSuiteRuns(api.db, t.workspace.id)).toBe(1);
    expect(await api.queue.getJobCounts('waiting')).toEqual(before);
  });

  it('finished runs free the active limit; the monthly limit still counts them', async () => {
    const t = await tenant({ count: 1 }, { maxActiveRuns: 1, monthlyRuns: 2 });
    const testId = t.firstTestId;
    const first = await t.post({ testId });
    expect(first.status).toBe(201);
    expectProblem(await t.post({ testId }), 'plan_limit_exceeded');
    await api.db.run.update({ where: { id: bodyOf(first, wire.runCreated).runId }, data: { status: 'passed' } });
    expect((await t.post({ testId })).status).toBe(201);
    await api.db.run.updateMany({ where: { workspaceId: t.workspace.id }, data: { status: 'passed' } });
    const p = expectProblem(await t.post({ testId }), 'plan_limit_exceeded');
    expect(p.detail).toContain('monthly runs');
    expect(await countRuns(api.db, t.workspace.id)).toBe(2);
  });

  it('concurrent requests cannot pass the limit together (workspace row locked)', async () => {
    const t = await tenant({ count: 1 }, { maxActiveRuns: 3 });
    const testId = t.firstTestId;
    const results = await Promise.all(Array.from({ length: 6 }, () => t.post({ testId })));
    expect(results.map((r) => r.status).sort()).toEqual([201, 201, 201, 422, 422, 422]);
    expect(await countRuns(api.db, t.workspace.id)).toBe(3);
  });

  it('disabled tests do not count toward the limits', async () => {
    const t = await tenant({ count: 3, disabled: 2 }, { maxActiveRuns: 1 });
    expect((await t.post({ projectSlug: 'shop', suiteSlug: 'smoke' })).status).toBe(201);
    expect(await countRuns(api.db, t.workspace.id)).toBe(3);
  });
});

describe('problem+json on every other path', () => {
  it('unknown routes are 404 problems', async () => {
    expectProblem(await request(api.app).get('/nope'), 'not_found');
    expectProblem(await request(api.app).get('/api/v2/runs'), 'not_found');
    expectProblem(await request(api.app).get('/api/v1/problems/nope'), 'not_found');
    const t = await createTenant(api.db);
    expectProblem(await request(api.app).delete('/api/v1/runs/run_x').set(bearer(t.key)), 'method_not_allowed');
    expectProblem(await request(api.app).get('/api/v1/run').set(bearer(t.key)), 'not_found');
  });

  it('every problem code has a served description, the catalogue of contracts', async () => {
    const isDescription = compileValidator(ProblemDescription);
    for (const code of PROBLEM_CODES) {
      const res = await request(api.app).get(problemType(code));
      expect(res.status).toBe(200);
      const served = bodyOf(res, isDescription);
      expect(served).toEqual({ code, ...PROBLEMS[code] });
      expect(served.description.length).toBeGreaterThan(20);
    }
    // The rate limit is configurable: its description must not state a number that can be wrong.
    expect(PROBLEMS.rate_limited.description).not.toMatch(/\d/);
  });
});

/** A local port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as { port: number };
  await new Promise<void>((r) => server.close(() => r()));
  return port;
}

describe('backing services down', () => {
  it('Postgres unreachable: 503 service_unavailable on API calls and /readyz, /healthz still 200', async () => {
    const port = await closedPort();
    const t = await createTenant(api.db);
    const down = buildTestApi({ env: { DATABASE_URL: `postgresql://postgres@127.0.0.1:${port}/none` } });
    try {
      const get = await request(down.app).get('/api/v1/runs/run_x').set(bearer(t.key));
      expectProblem(get, 'service_unavailable');
      expect(get.headers['retry-after']).toBeDefined();
      expectProblem(
        await request(down.app).post('/api/v1/runs').set(bearer(t.key)).send({ projectSlug: 'shop' }),
        'service_unavailable',
      );
      const ready = await request(down.app).get('/readyz');
      expect(expectProblem(ready, 'service_unavailable').detail).toContain('Postgres');
      expect((await request(down.app).get('/healthz')).status).toBe(200);
      expect(down.logs.text()).not.toContain(t.key);
    } finally {
      await down.close();
    }
  });

  it('Redis unreachable: 503 on API calls and /readyz, nothing created', async () => {
    const port = await closedPort();
    const t = await tenant({ count: 1 });
    const down = buildTestApi({ env: { REDIS_URL: `redis://127.0.0.1:${port}` }, db: api.db });
    try {
      expectProblem(await request(down.app).get('/api/v1/runs/run_x').set(bearer(t.key)), 'service_unavailable');
      expectProblem(
        await request(down.app).post('/api/v1/runs').set(bearer(t.key)).send({ projectSlug: 'shop' }),
        'service_unavailable',
      );
      const ready = await request(down.app).get('/readyz');
      expect(expectProblem(ready, 'service_unavailable').detail).toContain('Redis');
      expect(await countRuns(api.db, t.workspace.id)).toBe(0);
    } finally {
      await down.close();
    }
  });

  it('queue unreachable after the runs are recorded: still 201, runs kept queued for the reconciler', async () => {
    const port = await closedPort();
    const t = await tenant({ count: 2 });
    const logger = createLogger({ service: 'api', level: 'error' });
    const deadRedis = createApiRedis(`redis://127.0.0.1:${port}`, logger);
    const deadQueue = createRunQueue(deadRedis, `${api.config.redisPrefix}-dead`);
    deadQueue.on('error', () => undefined);
    const app = createApp({
      config: api.config,
      db: api.db,
      redis: api.redis,
      queue: deadQueue,
      store: new LocalArtifactStore(api.config.artifactsDir),
      keys: deriveKeys(api.config.secret),
      logger,
    });
    try {
      const res = await request(app)
        .post('/api/v1/runs')
        .set(bearer(t.key))
        .send({ projectSlug: 'shop', suiteSlug: 'smoke' });
      expect(res.status).toBe(201);
      const runs = await api.db.run.findMany({ where: { suiteRunId: bodyOf(res, wire.suiteRunCreated).suiteRunId } });
      expect(runs.map((r) => r.status)).toEqual(['queued', 'queued']);
    } finally {
      await deadQueue.close().catch(() => undefined);
      deadRedis.disconnect();
    }
  });
});

describe('internal errors', () => {
  it('a fault inside a handler is a 500 problem without stack or SQL', async () => {
    // A database of its own whose schema is broken on purpose, so no other suite sees the damage.
    const url = new URL(process.env.DATABASE_URL ?? '');
    url.pathname = `${url.pathname}_broken`;
    await ensureDatabase(url.toString());
    await migrateDatabase(url.toString());
    const db = createPrisma({ databaseUrl: url.toString(), max: 2 });
    const broken = buildTestApi({ db });
    try {
      const t = await createTenant(db);
      await db.$executeRawUnsafe('ALTER TABLE suite_runs RENAME COLUMN total_count TO total_count_x');
      const res = await request(broken.app).get('/api/v1/suite-runs/srun_x').set(bearer(t.key));
      expect(expectProblem(res, 'internal_error').detail).not.toMatch(/total_count/);
      expect(broken.logs.text()).toContain('unhandled error');
    } finally {
      await broken.close();
      await db.$disconnect();
      await dropDatabase(url.toString());
    }
  });
});
