import request from 'supertest';
import { applyProject } from '../../packages/admin/src/operations';
import { createTenant, sampleProject } from '../support/harness';
import { bearer, buildTestApi, type TestApi } from './api-harness';
import { bodyOf, nth, problemOf, wire } from './typed';

let api: TestApi;
beforeAll(() => {
  api = buildTestApi();
});
afterAll(async () => {
  await api.close();
});

/** A workspace with project `shop` (suites a and b, 2 tests each) and project `blog` (suite a, 1 test). */
async function tenant() {
  const t = await createTenant(api.db);
  const shop = await applyProject(api.db, t.workspace.id, sampleProject('shop', { count: 2, suites: ['a', 'b'] }));
  const blog = await applyProject(api.db, t.workspace.id, sampleProject('blog', { count: 1, suites: ['a'] }));
  const post = (body: object) => request(api.app).post('/api/v1/runs').set(bearer(t.key)).send(body);
  const get = (path: string) => request(api.app).get(path).set(bearer(t.key));
  return { ...t, shop, blog, post, get };
}

/** Every page of a listing, following next_cursor. */
async function walk(get: (path: string) => request.Test, path: string): Promise<string[][]> {
  const pages: string[][] = [];
  let next: string | null = path;
  while (next !== null) {
    const res = await get(next);
    expect(res.status).toBe(200);
    const list = bodyOf(res, wire.runList);
    pages.push(list.runs.map((r) => r.id));
    next = list.next_cursor === null ? null : `${path}${path.includes('?') ? '&' : '?'}cursor=${list.next_cursor}`;
  }
  return pages;
}

describe('GET /api/v1/projects', () => {
  it('lists the projects by slug with their suites and tests, ids and keys, and nothing of other workspaces', async () => {
    const t = await tenant();
    const other = await createTenant(api.db);
    await applyProject(api.db, other.workspace.id, sampleProject('zzz-other'));
    const list = bodyOf(await t.get('/api/v1/projects'), wire.projectList);
    expect(list.projects.map((p) => p.slug)).toEqual(['blog', 'shop']);
    const shop = nth(list.projects, 1);
    expect(shop).toMatchObject({ id: t.shop.projectId, name: 'Project shop', base_url: 'http://127.0.0.1:2' });
    expect(shop.suites.map((s) => [s.slug, s.tests.map((x) => [x.key, x.name, x.enabled])])).toEqual([
      [
        'a',
        [
          ['t1', 'a test 1', true],
          ['t2', 'a test 2', true],
        ],
      ],
      [
        'b',
        [
          ['t1', 'b test 1', true],
          ['t2', 'b test 2', true],
        ],
      ],
    ]);
    expect(nth(nth(shop.suites, 0).tests, 0).id).toBe(nth(nth(t.shop.suites, 0).tests, 0).id);
  });

  it('is an empty list for a workspace without projects', async () => {
    const t = await createTenant(api.db);
    const res = await request(api.app).get('/api/v1/projects').set(bearer(t.key));
    expect(bodyOf(res, wire.projectList)).toEqual({ projects: [] });
  });
});

describe('GET /api/v1/runs', () => {
  it('pages newest first without gaps or duplicates, while more runs are being created', async () => {
    const t = await tenant();
    const created: string[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await t.post({ projectSlug: 'shop' });
      created.push(...bodyOf(res, wire.runsCreated).runIds);
    }
    const pages: string[][] = [];
    let cursor: string | null = null;
    do {
      const res = await t.get(`/api/v1/runs?limit=5${cursor ? `&cursor=${cursor}` : ''}`);
      const list = bodyOf(res, wire.runList);
      pages.push(list.runs.map((r) => r.id));
      cursor = list.next_cursor;
      // Runs created between pages are newer than every page so far: they never shift the walk.
      await t.post({ projectSlug: 'blog' });
    } while (cursor !== null);
    const seen = pages.flat();
    expect(pages.map((p) => p.length)).toEqual([5, 5, 2]);
    expect(new Set(seen).size).toBe(seen.length);
    expect(new Set(seen)).toEqual(new Set(created));
    // Newest first: created_at never increases along the walk.
    const runs = await api.db.run.findMany({ where: { id: { in: seen } }, select: { id: true, createdAt: true } });
    const at = new Map(runs.map((r) => [r.id, r.createdAt.getTime()]));
    const times = seen.map((id) => at.get(id) ?? Number.NaN);
    expect(times).toEqual([...times].sort((a, b) => b - a));
  });

  it('filters by project, suite, test, suite run, status and creation time', async () => {
    const t = await tenant();
    const shopA = bodyOf(await t.post({ projectSlug: 'shop', suiteSlug: 'a' }), wire.suiteRunCreated).suiteRunId;
    const shopRuns = bodyOf(await t.post({ projectSlug: 'shop' }), wire.runsCreated).runIds;
    const middle = new Date();
    const blogRun = bodyOf(await t.post({ projectSlug: 'blog' }), wire.runsCreated).runIds;
    const testId = nth(nth(t.shop.suites, 1).tests, 0).id;
    const [failed] = shopRuns;
    await api.db.run.update({
      where: { id: failed ?? '' },
      data: { status: 'failed', outcomeCode: 'expectation_failed' },
    });

    const ids = async (query: string) =>
      (await walk(t.get, `/api/v1/runs?${query}`)).flat().sort((a, b) => a.localeCompare(b));
    const runsOf = async (where: object) =>
      (await api.db.run.findMany({ where: { workspaceId: t.workspace.id, ...where }, select: { id: true } }))
        .map((r) => r.id)
        .sort((a, b) => a.localeCompare(b));

    expect(await ids('projectSlug=blog')).toEqual([...blogRun].sort((a, b) => a.localeCompare(b)));
    expect(await ids('projectSlug=shop&suiteSlug=b')).toEqual(await runsOf({ suiteId: nth(t.shop.suites, 1).id }));
    expect((await ids('projectSlug=shop&suiteSlug=b')).length).toBe(2);
    expect(await ids(`testId=${testId}`)).toEqual(await runsOf({ testId }));
    expect(await ids(`suiteRunId=${shopA}`)).toEqual(await runsOf({ suiteRunId: shopA }));
    expect(await ids('status=failed')).toEqual([failed]);
    expect(await ids('status=failed,queued&limit=2')).toEqual(await runsOf({}));
    expect(await ids(`status=queued&projectSlug=shop&limit=1`)).toEqual(
      (await runsOf({ projectId: t.shop.projectId })).filter((id) => id !== failed),
    );
    expect(await ids(`createdAfter=${middle.toISOString()}`)).toEqual([...blogRun].sort((a, b) => a.localeCompare(b)));
    expect(await ids(`createdBefore=${middle.toISOString()}&projectSlug=blog`)).toEqual([]);
  });

  it('gives each run as GET /runs/{id} does', async () => {
    const t = await tenant();
    const [runId] = bodyOf(await t.post({ projectSlug: 'blog' }), wire.runsCreated).runIds;
    const list = bodyOf(await t.get('/api/v1/runs'), wire.runList);
    const one = bodyOf(await t.get(`/api/v1/runs/${runId ?? ''}`), wire.run);
    expect(list).toEqual({ runs: [one], next_cursor: null });
  });

  it('never shows another workspace, not even through a filter naming its ids', async () => {
    const t = await tenant();
    const other = await tenant();
    const [foreign] = bodyOf(await other.post({ projectSlug: 'blog' }), wire.runsCreated).runIds;
    const run = await api.db.run.findUniqueOrThrow({ where: { id: foreign ?? '' } });
    expect(bodyOf(await t.get(`/api/v1/runs?testId=${run.testId}`), wire.runList).runs).toEqual([]);
    expect(bodyOf(await t.get('/api/v1/runs'), wire.runList).runs).toEqual([]);
    problemOf(await t.get('/api/v1/runs?projectSlug=nope'), 'not_found');
  });

  it('refuses a bad query with 400 invalid_query naming each parameter', async () => {
    const t = await tenant();
    const bad = async (query: string, path: string) => {
      const problem = problemOf(await t.get(`/api/v1/runs?${query}`), 'invalid_query');
      expect(problem.errors?.map((e) => e.path)).toContain(path);
    };
    await bad('limit=0', '/limit');
    await bad('limit=101', '/limit');
    await bad('limit=ten', '/limit');
    await bad('status=green', '/status');
    await bad('createdAfter=yesterday', '/createdAfter');
    await bad('suiteSlug=a', '/suiteSlug');
    await bad('colour=red', '/colour');
    await bad('status=passed&status=failed', '/status');
    await bad('cursor=not-a-cursor', '/cursor');
    // A cursor of another listing (other filters) is refused, not silently misapplied.
    for (let i = 0; i < 2; i++) await t.post({ projectSlug: 'blog' });
    const first = bodyOf(await t.get('/api/v1/runs?limit=1&projectSlug=blog'), wire.runList);
    await bad(`limit=1&projectSlug=shop&cursor=${first.next_cursor ?? ''}`, '/cursor');
    expect((await t.get(`/api/v1/runs?limit=1&projectSlug=blog&cursor=${first.next_cursor ?? ''}`)).status).toBe(200);
  });
  it('refuses an instant or a cursor Postgres cannot take with 400 invalid_query naming it, on both listings', async () => {
    const t = await tenant();
    for (const listing of ['runs', 'suite-runs']) {
      // A cursor as the listing writes one (unfiltered), around a given instant and id.
      const cursor = (at: string, id: string) =>
        `cursor=${Buffer.from(JSON.stringify([at, id, JSON.stringify([listing])])).toString('base64url')}`;
      expect((await t.get(`/api/v1/${listing}?${cursor('2026-01-01T00:00:00.000Z', 'x')}`)).status).toBe(200);
      const cases: Array<[string, string]> = [
        // A leap second is valid RFC 3339, but no JavaScript Date (nor Postgres instant) holds it.
        ['createdAfter=2016-12-31T23:59:60Z', '/createdAfter'],
        ['createdBefore=2016-12-31T23:59:60Z', '/createdBefore'],
        // Before Postgres's first instant (4713 BC) and after its last, though a Date holds both.
        [cursor('-271821-04-20T00:00:00.000Z', 'x'), '/cursor'],
        [cursor('+275760-09-13T00:00:00.000Z', 'x'), '/cursor'],
        // Ids Postgres cannot store, so cannot compare.
        [cursor('2026-01-01T00:00:00.000Z', 'x\u0000y'), '/cursor'],
        [cursor('2026-01-01T00:00:00.000Z', 'x\ud800y'), '/cursor'],
      ];
      for (const [query, path] of cases) {
        const problem = problemOf(await t.get(`/api/v1/${listing}?${query}`), 'invalid_query');
        expect([listing, query, problem.errors?.map((e) => e.path)]).toEqual([listing, query, [path]]);
        expect(problem.detail).toContain(path.slice(1));
      }
    }
  });
});

describe('GET /api/v1/suite-runs', () => {
  it('lists suite runs newest first without their tests, with what they ran, filtered like runs', async () => {
    const t = await tenant();
    const a = bodyOf(await t.post({ projectSlug: 'shop', suiteSlug: 'a' }), wire.suiteRunCreated).suiteRunId;
    const b = bodyOf(await t.post({ projectSlug: 'shop', suiteSlug: 'b' }), wire.suiteRunCreated).suiteRunId;
    const c = bodyOf(await t.post({ projectSlug: 'blog', suiteSlug: 'a' }), wire.suiteRunCreated).suiteRunId;
    const list = bodyOf(await t.get('/api/v1/suite-runs'), wire.suiteRunList);
    expect(list.suite_runs.map((s) => [s.id, s.project_slug, s.suite_slug, s.suite_name])).toEqual([
      [c, 'blog', 'a', 'Suite a'],
      [b, 'shop', 'b', 'Suite b'],
      [a, 'shop', 'a', 'Suite a'],
    ]);
    const one = bodyOf(await t.get(`/api/v1/suite-runs/${a}`), wire.suiteRun);
    const { tests: _tests, ...summary } = one;
    expect(nth(list.suite_runs, 2)).toEqual({
      ...summary,
      project_slug: 'shop',
      suite_slug: 'a',
      suite_name: 'Suite a',
    });

    const page = bodyOf(await t.get('/api/v1/suite-runs?projectSlug=shop&limit=1'), wire.suiteRunList);
    expect(page.suite_runs.map((s) => s.id)).toEqual([b]);
    const next = await t.get(`/api/v1/suite-runs?projectSlug=shop&limit=1&cursor=${page.next_cursor ?? ''}`);
    expect(bodyOf(next, wire.suiteRunList)).toMatchObject({ next_cursor: null });
    expect(bodyOf(next, wire.suiteRunList).suite_runs.map((s) => s.id)).toEqual([a]);
    const bySuite = bodyOf(await t.get('/api/v1/suite-runs?projectSlug=shop&suiteSlug=b'), wire.suiteRunList);
    expect(bySuite.suite_runs.map((s) => s.id)).toEqual([b]);
    const byStatus = bodyOf(await t.get('/api/v1/suite-runs?status=passed'), wire.suiteRunList);
    expect(byStatus.suite_runs).toEqual([]);
    problemOf(await t.get('/api/v1/suite-runs?testId=x'), 'invalid_query');
    problemOf(await t.get('/api/v1/suite-runs?projectSlug=shop&suiteSlug=nope'), 'not_found');
  });
});
