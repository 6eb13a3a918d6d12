// Deployments over the API: versions of a project's tests, activation and rollback, previews run by
// deploymentId; every run and suite run names the deployment whose definitions it snapshotted.
import request from 'supertest';
import type { ApiKeyScope, ProjectFile } from '@testrun/contracts';
import { applyProject, createApiKey } from '../../packages/admin/src/operations';
import { createTenant, sampleProject } from '../support/harness';
import { bearer, buildTestApi, type TestApi } from './api-harness';
import { bodyOf, nth, problemOf, stringMatching, wire } from './typed';

let api: TestApi;
beforeAll(() => {
  api = buildTestApi();
});
afterAll(async () => {
  await api.close();
});

const deploymentsOf = (slug: string) => `/api/v1/projects/${slug}/deployments`;

/** A project file whose test `smoke/t1` goes to `path`. */
function project(slug: string, path: string, extra: Partial<ProjectFile> = {}): ProjectFile {
  const file = sampleProject(slug, { count: 2 });
  const [suite] = file.suites;
  if (!suite?.tests[0]) throw new Error('a sample project has a test');
  suite.tests[0].steps = [{ action: 'goto', url: path }];
  return { ...file, ...extra };
}

async function deploy(key: string, file: unknown, options: { activate?: boolean; slug?: string } = {}) {
  const slug = options.slug ?? (file as ProjectFile).slug;
  return request(api.app)
    .post(deploymentsOf(slug))
    .set(bearer(key))
    .send({ project: file, activate: options.activate ?? true });
}

/** The steps a run snapshotted, and the deployment it names. */
async function runRow(runId: string) {
  return api.db.run.findUniqueOrThrow({
    where: { id: runId },
    select: { steps: true, deploymentId: true, testId: true },
  });
}

async function runOne(key: string, body: Record<string, unknown>) {
  const res = await request(api.app).post('/api/v1/runs').set(bearer(key)).send(body);
  expect(res.status).toBe(201);
  return bodyOf(res, wire.runCreated).runId;
}

describe('POST /api/v1/projects/{projectSlug}/deployments', () => {
  it('creates the project on first deploy, then versions it; a test keeps its testId and runs execute the active version', async () => {
    const t = await createTenant(api.db, { scopes: ['deploy'] });
    const first = await deploy(t.key, project('shop', '/v1'));
    expect(first.status).toBe(201);
    const v1 = bodyOf(first, wire.deployment);
    expect(v1).toMatchObject({
      id: stringMatching(/^dep_/),
      project_slug: 'shop',
      version: 1,
      active: true,
      created_by: { key_id: t.keyId, key_name: `key-${t.tag}` },
      changes: {
        added: [
          { suiteSlug: 'smoke', key: 't1', name: 'smoke test 1' },
          { suiteSlug: 'smoke', key: 't2', name: 'smoke test 2' },
        ],
        removed: [],
        changed: [],
      },
    });
    expect(JSON.stringify(first.body)).not.toContain(t.key);
    const testId = nth(v1.tests, 0).testId;
    expect(v1.tests.map((x) => [x.suiteSlug, x.key, x.enabled])).toEqual([
      ['smoke', 't1', true],
      ['smoke', 't2', true],
    ]);

    const before = await runOne(t.key, { testId });
    expect(await runRow(before)).toMatchObject({ steps: [{ action: 'goto', url: '/v1' }], deploymentId: v1.id });

    const second = await deploy(t.key, project('shop', '/v2'));
    const v2 = bodyOf(second, wire.deployment);
    expect(v2).toMatchObject({
      version: 2,
      active: true,
      changes: { added: [], removed: [], changed: [{ suiteSlug: 'smoke', key: 't1', name: 'smoke test 1' }] },
    });
    expect(nth(v2.tests, 0).testId).toBe(testId);
    const after = await runOne(t.key, { testId });
    expect(await runRow(after)).toMatchObject({ steps: [{ action: 'goto', url: '/v2' }], deploymentId: v2.id });
    // The run queued before the new version keeps the definitions it was enqueued with.
    expect(await runRow(before)).toMatchObject({ steps: [{ action: 'goto', url: '/v1' }], deploymentId: v1.id });

    // GET run and GET suite run show the deployment.
    const got = await request(api.app).get(`/api/v1/runs/${after}`).set(bearer(t.key));
    expect(bodyOf(got, wire.run).deployment_id).toBe(v2.id);
    const suite = await request(api.app)
      .post('/api/v1/runs')
      .set(bearer(t.key))
      .send({ projectSlug: 'shop', suiteSlug: 'smoke' });
    const { suiteRunId } = bodyOf(suite, wire.suiteRunCreated);
    const suiteRun = await request(api.app).get(`/api/v1/suite-runs/${suiteRunId}`).set(bearer(t.key));
    expect(bodyOf(suiteRun, wire.suiteRun).deployment_id).toBe(v2.id);

    // Roll back: the next run executes version 1 again, under the same testId.
    const rolled = await request(api.app)
      .post(`${deploymentsOf('shop')}/${v1.id}/activate`)
      .set(bearer(t.key));
    expect(rolled.status).toBe(200);
    expect(bodyOf(rolled, wire.deployment)).toMatchObject({ id: v1.id, active: true });
    const again = await runOne(t.key, { testId });
    expect(await runRow(again)).toMatchObject({ steps: [{ action: 'goto', url: '/v1' }], deploymentId: v1.id });
    const v2now = await request(api.app)
      .get(`${deploymentsOf('shop')}/${v2.id}`)
      .set(bearer(t.key));
    expect(bodyOf(v2now, wire.deployment).active).toBe(false);
  });

  it('a removed test leaves the active version (404 to run) and its runs stay readable; restoring it keeps its testId', async () => {
    const t = await createTenant(api.db, { scopes: ['deploy'] });
    const v1 = bodyOf(await deploy(t.key, sampleProject('shop', { count: 2 })), wire.deployment);
    const removedId = nth(v1.tests, 1).testId;
    const runId = await runOne(t.key, { testId: removedId });
    const v2 = bodyOf(await deploy(t.key, sampleProject('shop', { count: 1 })), wire.deployment);
    expect(v2.changes.removed).toEqual([{ suiteSlug: 'smoke', key: 't2', name: 'smoke test 2' }]);
    expect((await request(api.app).post('/api/v1/runs').set(bearer(t.key)).send({ testId: removedId })).status).toBe(
      404,
    );
    expect((await request(api.app).get(`/api/v1/runs/${runId}`).set(bearer(t.key))).status).toBe(200);
    const v3 = bodyOf(await deploy(t.key, sampleProject('shop', { count: 2 })), wire.deployment);
    expect(nth(v3.tests, 1).testId).toBe(removedId);
  });

  it('a preview (activate: false) runs only through deploymentId; plain runs keep the active version', async () => {
    const t = await createTenant(api.db, { scopes: ['deploy'] });
    const live = bodyOf(await deploy(t.key, project('shop', '/live')), wire.deployment);
    const withNew = project('shop', '/preview', { baseUrl: 'http://127.0.0.1:3' });
    nth(withNew.suites, 0).tests.push({ key: 'new', name: 'new test', steps: [{ action: 'goto', url: '/new' }] });
    const res = await deploy(t.key, withNew, { activate: false });
    expect(res.status).toBe(201);
    const preview = bodyOf(res, wire.deployment);
    expect(preview).toMatchObject({ version: 2, active: false, activated_at: null });
    expect(preview.changes.added).toEqual([{ suiteSlug: 'smoke', key: 'new', name: 'new test' }]);

    // The live project is untouched: listings show the active version's tests only.
    const projects = bodyOf(await request(api.app).get('/api/v1/projects').set(bearer(t.key)), wire.projectList);
    expect(nth(nth(projects.projects, 0).suites, 0).tests.map((x) => x.key)).toEqual(['t1', 't2']);

    const plain = bodyOf(
      await request(api.app).post('/api/v1/runs').set(bearer(t.key)).send({ projectSlug: 'shop' }),
      wire.runsCreated,
    ).runIds;
    expect(plain).toHaveLength(2);
    expect(await runRow(nth(plain, 0))).toMatchObject({
      steps: [{ action: 'goto', url: '/live' }],
      deploymentId: live.id,
    });

    const previewRuns = bodyOf(
      await request(api.app)
        .post('/api/v1/runs')
        .set(bearer(t.key))
        .send({ projectSlug: 'shop', deploymentId: preview.id }),
      wire.runsCreated,
    ).runIds;
    expect(previewRuns).toHaveLength(3);
    const rows = await api.db.run.findMany({ where: { id: { in: previewRuns } }, orderBy: { position: 'asc' } });
    expect(rows.map((r) => [r.steps, r.deploymentId, r.baseUrl])).toEqual([
      [[{ action: 'goto', url: '/preview' }], preview.id, 'http://127.0.0.1:3'],
      [[{ action: 'goto', url: '/' }], preview.id, 'http://127.0.0.1:3'],
      [[{ action: 'goto', url: '/new' }], preview.id, 'http://127.0.0.1:3'],
    ]);
    // A test only the preview has runs by its id with the preview, and is no live test without it.
    const newId = nth(preview.tests, 2).testId;
    expect((await request(api.app).post('/api/v1/runs').set(bearer(t.key)).send({ testId: newId })).status).toBe(404);
    const single = await runOne(t.key, { testId: newId, deploymentId: preview.id });
    expect(await runRow(single)).toMatchObject({ testId: newId, deploymentId: preview.id });
    // A suite of the preview runs as a suite run naming it.
    const suite = await request(api.app)
      .post('/api/v1/runs')
      .set(bearer(t.key))
      .send({ projectSlug: 'shop', suiteSlug: 'smoke', deploymentId: preview.id });
    const suiteRun = await request(api.app)
      .get(`/api/v1/suite-runs/${bodyOf(suite, wire.suiteRunCreated).suiteRunId}`)
      .set(bearer(t.key));
    expect(bodyOf(suiteRun, wire.suiteRun)).toMatchObject({ deployment_id: preview.id, total_count: 3 });

    // Promoting the preview makes its new test live, with the id it already had.
    await request(api.app)
      .post(`${deploymentsOf('shop')}/${preview.id}/activate`)
      .set(bearer(t.key))
      .expect(200);
    const promoted = bodyOf(await request(api.app).get('/api/v1/projects').set(bearer(t.key)), wire.projectList);
    expect(nth(nth(promoted.projects, 0).suites, 0).tests.map((x) => x.id)).toContain(newId);
  });

  it('a deploymentId of another project, another workspace or none at all is 404', async () => {
    const a = await createTenant(api.db, { scopes: ['deploy'] });
    const b = await createTenant(api.db, { scopes: ['deploy'] });
    bodyOf(await deploy(a.key, sampleProject('shop')), wire.deployment);
    const blog = bodyOf(await deploy(a.key, sampleProject('blog')), wire.deployment);
    const theirs = bodyOf(await deploy(b.key, sampleProject('shop')), wire.deployment);
    for (const deploymentId of [blog.id, theirs.id, 'dep_nope']) {
      const res = await request(api.app)
        .post('/api/v1/runs')
        .set(bearer(a.key))
        .send({ projectSlug: 'shop', deploymentId });
      expect(res.status).toBe(404);
      problemOf(res, 'not_found');
    }
  });

  it("another workspace's projects and deployments are 404, exactly like missing ones", async () => {
    const a = await createTenant(api.db, { scopes: ['deploy'] });
    const b = await createTenant(api.db, { scopes: ['deploy'] });
    const theirs = bodyOf(await deploy(b.key, sampleProject('secret')), wire.deployment);
    bodyOf(await deploy(a.key, sampleProject('mine')), wire.deployment);
    const paths = (slug: string, id: string): Array<['get' | 'post', string]> => [
      ['get', deploymentsOf(slug)],
      ['get', `${deploymentsOf(slug)}/${id}`],
      ['post', `${deploymentsOf(slug)}/${id}/activate`],
    ];
    const missing = paths('never-was', 'dep_never');
    for (const [i, [method, theirsPath]] of paths('secret', theirs.id).entries()) {
      const [, missingPath] = nth(missing, i);
      const one = await request(api.app)[method](theirsPath).set(bearer(a.key));
      const other = await request(api.app)[method](missingPath).set(bearer(a.key));
      expect([one.status, other.status]).toEqual([404, 404]);
      expect(problemOf(one).title).toBe(problemOf(other).title);
    }
    // A deployment of one's own project looked up under another slug is missing too.
    expect(
      (
        await request(api.app)
          .get(`${deploymentsOf('mine')}/${theirs.id}`)
          .set(bearer(a.key))
      ).status,
    ).toBe(404);
    // Deploying the same slug in another workspace is another project.
    const mine = bodyOf(await deploy(a.key, sampleProject('secret')), wire.deployment);
    expect(mine.version).toBe(1);
  });

  it('an invalid file is 422 naming every error by JSON pointer under /project, and stores nothing', async () => {
    const t = await createTenant(api.db, { scopes: ['deploy'] });
    const bad = sampleProject('shop', { count: 2 }) as unknown as {
      suites: Array<{ tests: Array<Record<string, unknown>> }>;
    };
    const tests = nth(bad.suites, 0).tests;
    nth(tests, 1).key = nth(tests, 0).key;
    nth(tests, 0).steps = [{ action: 'expectText', selector: 'h1' }];
    const res = await deploy(t.key, bad);
    expect(res.status).toBe(422);
    const problem = problemOf(res, 'invalid_project');
    expect(problem.errors?.map((e) => e.path)).toEqual([
      '/project/suites/0/tests/0/steps/0',
      '/project/suites/0/tests/1/key',
    ]);
    const shape = await deploy(t.key, { ...sampleProject('shop'), name: 42, extra: true });
    expect(problemOf(shape, 'invalid_project').errors?.map((e) => e.path)).toEqual(['/project/extra', '/project/name']);
    expect(await api.db.project.count({ where: { workspaceId: t.workspace.id } })).toBe(0);
    expect(await api.db.deployment.count({ where: { workspaceId: t.workspace.id } })).toBe(0);
  });

  it("the slug of the file must be the path's: 422 naming /project/slug", async () => {
    const t = await createTenant(api.db, { scopes: ['deploy'] });
    const res = await deploy(t.key, sampleProject('shop'), { slug: 'blog' });
    expect(res.status).toBe(422);
    expect(problemOf(res, 'invalid_project').errors).toEqual([
      { path: '/project/slug', message: expect.stringContaining('"blog"') as string },
    ]);
    expect(await api.db.project.count({ where: { workspaceId: t.workspace.id } })).toBe(0);
  });

  it('an envelope that is not one is 400 invalid_body', async () => {
    const t = await createTenant(api.db, { scopes: ['deploy'] });
    const res = await request(api.app).post(deploymentsOf('shop')).set(bearer(t.key)).send({ file: {} });
    expect(res.status).toBe(400);
    problemOf(res, 'invalid_body');
  });

  it('dryRun answers the changes (200) and stores nothing', async () => {
    const t = await createTenant(api.db, { scopes: ['deploy'] });
    const v1 = bodyOf(await deploy(t.key, sampleProject('shop', { count: 2 })), wire.deployment);
    const res = await request(api.app)
      .post(deploymentsOf('shop'))
      .set(bearer(t.key))
      .send({ project: sampleProject('shop', { count: 3 }), dryRun: true });
    expect(res.status).toBe(200);
    const dry = bodyOf(res, wire.deploymentDryRun);
    expect(dry.changes).toEqual({
      added: [{ suiteSlug: 'smoke', key: 't3', name: 'smoke test 3' }],
      removed: [],
      changed: [],
    });
    expect(dry.tests.map((x) => x.testId)).toEqual([nth(v1.tests, 0).testId, nth(v1.tests, 1).testId, null]);
    expect(await api.db.deployment.count({ where: { workspaceId: t.workspace.id } })).toBe(1);
    expect(await api.db.test.count({ where: { workspaceId: t.workspace.id } })).toBe(2);
    const fresh = await request(api.app)
      .post(deploymentsOf('new'))
      .set(bearer(t.key))
      .send({ project: sampleProject('new'), dryRun: true });
    expect(fresh.status).toBe(200);
    expect(await api.db.project.count({ where: { workspaceId: t.workspace.id } })).toBe(1);
  });

  it('Idempotency-Key replays the first deployment and stores one', async () => {
    const t = await createTenant(api.db, { scopes: ['deploy'] });
    const send = () =>
      request(api.app)
        .post(deploymentsOf('shop'))
        .set(bearer(t.key))
        .set('Idempotency-Key', 'deploy-1')
        .send({ project: sampleProject('shop'), activate: true });
    const first = await send();
    const second = await send();
    expect([first.status, second.status]).toEqual([201, 201]);
    expect(second.headers['idempotent-replayed']).toBe('true');
    expect(second.body).toEqual(first.body);
    expect(await api.db.deployment.count({ where: { workspaceId: t.workspace.id } })).toBe(1);
  });

  it('If-Match with a version that is no longer active is 412 and stores nothing', async () => {
    const t = await createTenant(api.db, { scopes: ['deploy'] });
    const v1 = bodyOf(await deploy(t.key, sampleProject('shop')), wire.deployment);
    // Two pipelines read version 1; both deploy with If-Match: "1". One wins, the other is stale.
    const send = (count: number) =>
      request(api.app)
        .post(deploymentsOf('shop'))
        .set(bearer(t.key))
        .set('If-Match', `"${v1.version}"`)
        .send({ project: sampleProject('shop', { count }) });
    const results = await Promise.all([send(3), send(4)]);
    expect(results.map((r) => r.status).sort()).toEqual([201, 412]);
    problemOf(
      nth(
        results.filter((r) => r.status === 412),
        0,
      ),
      'precondition_failed',
    );
    expect(await api.db.deployment.count({ where: { workspaceId: t.workspace.id } })).toBe(2);
    // An activation is guarded the same way.
    const stale = await request(api.app)
      .post(`${deploymentsOf('shop')}/${v1.id}/activate`)
      .set(bearer(t.key))
      .set('If-Match', '"1"');
    expect(stale.status).toBe(412);
    const current = await request(api.app)
      .post(`${deploymentsOf('shop')}/${v1.id}/activate`)
      .set(bearer(t.key))
      .set('If-Match', '"2"');
    expect(current.status).toBe(200);
  });

  it('a base URL the network policy refuses is an error of the file', async () => {
    const t = await createTenant(api.db, { scopes: ['deploy'] });
    const res = await deploy(t.key, sampleProject('shop', { baseUrl: 'http://169.254.169.254/' }));
    expect(res.status).toBe(422);
    expect(problemOf(res, 'invalid_project').errors?.map((e) => e.path)).toEqual(['/project/baseUrl']);
  });
});

describe('GET /api/v1/projects/{projectSlug}/deployments', () => {
  it("lists newest first in cursor pages; the admin CLI's project apply is a deployment too", async () => {
    const t = await createTenant(api.db, { scopes: ['deploy'] });
    const applied = await applyProject(api.db, t.workspace.id, sampleProject('shop', { count: 1 }));
    for (const count of [2, 3, 4]) await deploy(t.key, sampleProject('shop', { count }));
    const first = await request(api.app)
      .get(`${deploymentsOf('shop')}?limit=3`)
      .set(bearer(t.key));
    const page1 = bodyOf(first, wire.deploymentList);
    expect(page1.deployments.map((d) => d.version)).toEqual([4, 3, 2]);
    expect(page1.deployments.map((d) => d.active)).toEqual([true, false, false]);
    const second = await request(api.app)
      .get(`${deploymentsOf('shop')}?limit=3&cursor=${page1.next_cursor ?? ''}`)
      .set(bearer(t.key));
    const page2 = bodyOf(second, wire.deploymentList);
    expect(page2).toMatchObject({
      next_cursor: null,
      deployments: [{ version: 1, id: applied.deploymentId, created_by: null }],
    });
    const bad = await request(api.app)
      .get(`${deploymentsOf('shop')}?cursor=nope`)
      .set(bearer(t.key));
    expect(bad.status).toBe(400);
    problemOf(bad, 'invalid_query');
  });
});

describe('rerun', () => {
  it("a rerun executes the deployment its original suite run executed, a preview's included", async () => {
    const t = await createTenant(api.db, { scopes: ['deploy'] });
    bodyOf(await deploy(t.key, project('shop', '/live')), wire.deployment);
    const preview = bodyOf(await deploy(t.key, project('shop', '/preview'), { activate: false }), wire.deployment);
    const created = await request(api.app)
      .post('/api/v1/runs')
      .set(bearer(t.key))
      .send({ projectSlug: 'shop', suiteSlug: 'smoke', deploymentId: preview.id });
    const original = bodyOf(created, wire.suiteRunCreated).suiteRunId;
    await request(api.app).post(`/api/v1/suite-runs/${original}/cancel`).set(bearer(t.key)).expect(202);
    const res = await request(api.app)
      .post(`/api/v1/suite-runs/${original}/rerun`)
      .set(bearer(t.key))
      .send({ only: 'all' });
    expect(res.status).toBe(201);
    const rerunId = bodyOf(res, wire.suiteRunCreated).suiteRunId;
    const rerun = bodyOf(await request(api.app).get(`/api/v1/suite-runs/${rerunId}`).set(bearer(t.key)), wire.suiteRun);
    expect(rerun.deployment_id).toBe(preview.id);
    expect(await runRow(nth(rerun.tests, 0).runId)).toMatchObject({
      steps: [{ action: 'goto', url: '/preview' }],
      deploymentId: preview.id,
    });
  });
});

describe('kept versions', () => {
  it("keeps the last 50 versions, the last day's and any a run references; older unreferenced ones are deleted", async () => {
    const t = await createTenant(api.db, { scopes: ['deploy'] });
    const v1 = bodyOf(await deploy(t.key, project('shop', '/1')), wire.deployment);
    await runOne(t.key, { testId: nth(v1.tests, 0).testId });
    const v2 = bodyOf(await deploy(t.key, project('shop', '/2')), wire.deployment);
    // Deployments of the last 24 hours are never pruned (they count against maxDeploymentsPerDay).
    await api.db.deployment.updateMany({
      where: { id: { in: [v1.id, v2.id] } },
      data: { createdAt: new Date(Date.now() - 25 * 3600_000) },
    });
    for (let n = 3; n <= 52; n++) expect((await deploy(t.key, project('shop', `/${n}`))).status).toBe(201);
    const versions = await api.db.deployment.findMany({
      where: { workspaceId: t.workspace.id },
      select: { version: true },
      orderBy: { version: 'asc' },
    });
    // Version 1 is referenced by its run; version 2 is older than the last 50 (3 to 52) and unreferenced.
    expect(versions.map((v) => v.version)).toEqual([1, ...Array.from({ length: 50 }, (_, i) => i + 3)]);
    expect(
      (
        await request(api.app)
          .get(`${deploymentsOf('shop')}/${v2.id}`)
          .set(bearer(t.key))
      ).status,
    ).toBe(404);
    expect(
      (
        await request(api.app)
          .get(`${deploymentsOf('shop')}/${v1.id}`)
          .set(bearer(t.key))
      ).status,
    ).toBe(200);
  });
});

describe('scopes', () => {
  /** Another key of `t`'s workspace, holding `scopes` (and those they imply). */
  async function keyOf(t: Awaited<ReturnType<typeof createTenant>>, scopes: ApiKeyScope[]): Promise<string> {
    const made = await createApiKey(api.db, {
      workspaceId: t.workspace.id,
      creatorEmail: t.email,
      name: `key-${scopes.join('-')}-${t.tag}`,
      scopes,
    });
    return made.key;
  }

  it('a preview key stores previews and dry runs but not an active version; deploy activates', async () => {
    const t = await createTenant(api.db, { scopes: ['deploy'] });
    const preview = await keyOf(t, ['preview']);
    const runOnly = await keyOf(t, ['run']);

    const refused = problemOf(await deploy(preview, project('shop', '/v1')), 'insufficient_scope');
    expect(refused.required_scope).toBe('deploy');
    expect(await api.db.project.count({ where: { workspaceId: t.workspace.id } })).toBe(0);
    expect(
      problemOf(await deploy(runOnly, project('shop', '/v1'), { activate: false }), 'insufficient_scope'),
    ).toMatchObject({
      required_scope: 'preview',
    });

    const dry = await request(api.app)
      .post(deploymentsOf('shop'))
      .set(bearer(preview))
      .send({ project: project('shop', '/v1'), dryRun: true });
    expect(dry.status).toBe(200);
    expect((await deploy(preview, project('shop', '/v1'), { activate: false })).status).toBe(201);
    const active = bodyOf(await deploy(t.key, project('shop', '/v2')), wire.deployment);
    expect(active).toMatchObject({ version: 2, active: true });

    const activate = (key: string, id: string) =>
      request(api.app)
        .post(`${deploymentsOf('shop')}/${id}/activate`)
        .set(bearer(key));
    expect(problemOf(await activate(preview, active.id), 'insufficient_scope').required_scope).toBe('deploy');
    expect((await activate(t.key, active.id)).status).toBe(200);
  });

  it('running a preview by its deploymentId needs preview; the active deployment named by id needs only run', async () => {
    const t = await createTenant(api.db, { scopes: ['deploy'] });
    const runOnly = await keyOf(t, ['run']);
    const preview = await keyOf(t, ['preview']);
    const active = bodyOf(await deploy(t.key, project('shop', '/v1')), wire.deployment);
    const draft = bodyOf(await deploy(t.key, project('shop', '/v2'), { activate: false }), wire.deployment);
    const testId = nth(active.tests, 0).testId;

    const refused = await request(api.app)
      .post('/api/v1/runs')
      .set(bearer(runOnly))
      .send({ testId, deploymentId: draft.id });
    expect(problemOf(refused, 'insufficient_scope').required_scope).toBe('preview');
    const before = await api.db.run.count({ where: { workspaceId: t.workspace.id } });
    expect(before).toBe(0);

    expect(await runRow(await runOne(runOnly, { testId, deploymentId: active.id }))).toMatchObject({
      deploymentId: active.id,
    });
    expect(await runRow(await runOne(preview, { testId, deploymentId: draft.id }))).toMatchObject({
      steps: [{ action: 'goto', url: '/v2' }],
      deploymentId: draft.id,
    });
  });
});
