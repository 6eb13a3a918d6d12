import request from 'supertest';
import { REQUEST_LIMITS, STEP_LIMITS } from '@testrun/contracts';
import { applyProject } from '../../packages/admin/src/operations';
import { insertRuns } from '@testrun/core/runs';
import { deriveKeys } from '@testrun/core/secrets';
import { createRuns } from '../../apps/api/src/services/runs';
import { enqueuePolicy } from '../../apps/api/src/services/target-check';
import { createTenant, sampleProject } from '../support/harness';
import { bearer, buildTestApi, type TestApi } from './api-harness';
import { bodyOf, nth, wire } from './typed';

let api: TestApi;
beforeAll(() => {
  api = buildTestApi();
});
afterAll(async () => {
  await api.close();
});

/** Suite slugs s0, s1 … enough for `total` tests at a suite's cap each. */
const suitesFor = (total: number) =>
  Array.from({ length: Math.ceil(total / STEP_LIMITS.maxTestsPerSuite) }, (_, i) => `s${i}`);

describe('POST /api/v1/runs at the request cap', () => {
  it('a project of maxRunsPerRequest tests: every run created in order, skipped ones without jobs, jobs lined up after the runs already queued', async () => {
    const total = REQUEST_LIMITS.maxRunsPerRequest;
    const suites = suitesFor(total);
    const perSuite = total / suites.length;
    expect(Number.isInteger(perSuite)).toBe(true);
    const t = await createTenant(api.db, { maxActiveRuns: 100_000, monthlyRuns: 100_000 });
    await applyProject(api.db, t.workspace.id, sampleProject('shop', { count: 3 }));
    await applyProject(api.db, t.workspace.id, sampleProject('big', { count: perSuite, disabled: 2, suites }));
    // Three runs of the workspace are queued before the big request.
    const early = await request(api.app)
      .post('/api/v1/runs')
      .set(bearer(t.key))
      .send({ projectSlug: 'shop', suiteSlug: 'smoke' });
    expect(early.status).toBe(201);

    const res = await request(api.app).post('/api/v1/runs').set(bearer(t.key)).send({ projectSlug: 'big' });
    expect(res.status).toBe(201);
    const { runIds } = bodyOf(res, wire.runsCreated);
    expect(runIds).toHaveLength(total);
    expect(new Set(runIds).size).toBe(total);

    const runs = await api.db.run.findMany({
      where: { id: { in: runIds } },
      select: { id: true, position: true, testName: true, status: true, skipReason: true, steps: true, evidence: true },
    });
    const byId = new Map(runs.map((r) => [r.id, r]));
    const inOrder = runIds.map((id) => byId.get(id));
    const expected = suites.flatMap((s) =>
      Array.from({ length: perSuite }, (_, i) => ({
        name: `${s} test ${i + 1}`,
        status: i < perSuite - 2 ? 'queued' : 'skipped',
      })),
    );
    expect(inOrder.map((r) => ({ name: r?.testName, status: r?.status }))).toEqual(expected);
    expect(inOrder.map((r) => r?.position)).toEqual(runIds.map((_, i) => i));
    expect(runs.filter((r) => r.status === 'skipped').every((r) => r.skipReason === 'test_disabled')).toBe(true);
    expect(runs.map((r) => r.steps)).toEqual(runs.map(() => [{ action: 'goto', url: '/' }]));
    expect(new Set(runs.map((r) => JSON.stringify(r.evidence)))).toEqual(
      new Set(['{"trace":"on-failure","video":"off","screenshots":"on-failure"}']),
    );

    // One job per queued run, priorities counting on from the three queued before.
    const queued = runIds.filter((id) => byId.get(id)?.status === 'queued');
    const jobs = await Promise.all(runIds.map((id) => api.queue.getJob(id)));
    const priorities = new Map(jobs.flatMap((j) => (j?.id ? [[j.id, j.opts.priority]] : [])));
    expect([...priorities.keys()].sort()).toEqual([...queued].sort());
    expect(queued.map((id) => priorities.get(id))).toEqual(queued.map((_, i) => 3 + i + 1));
    expect(await api.db.run.count({ where: { workspaceId: t.workspace.id, status: 'queued' } })).toBe(
      3 + queued.length,
    );
  });

  it('a suite at the suite cap: the suite run counts every child as created', async () => {
    const t = await createTenant(api.db, { maxActiveRuns: 100_000, monthlyRuns: 100_000 });
    const count = STEP_LIMITS.maxTestsPerSuite;
    await applyProject(api.db, t.workspace.id, sampleProject('shop', { count, disabled: 7 }));
    const res = await request(api.app)
      .post('/api/v1/runs')
      .set(bearer(t.key))
      .send({ projectSlug: 'shop', suiteSlug: 'smoke', headers: { 'X-Token': 'abc' } });
    const { suiteRunId } = bodyOf(res, wire.suiteRunCreated);
    const suiteRun = await api.db.suiteRun.findUniqueOrThrow({ where: { id: suiteRunId } });
    expect(suiteRun).toMatchObject({
      status: 'queued',
      totalCount: count,
      queuedCount: count - 7,
      skippedCount: 7,
      runningCount: 0,
    });
    const groups = await api.db.run.groupBy({
      by: ['status'],
      where: { suiteRunId },
      _count: { _all: true },
      _min: { position: true },
      _max: { position: true },
    });
    expect(groups.map((g) => [g.status, g._count._all, g._min.position, g._max.position]).sort()).toEqual([
      ['queued', count - 7, 0, count - 8],
      ['skipped', 7, count - 7, count - 1],
    ]);
    // Only the runs that will execute hold the sealed headers.
    expect(await api.db.run.count({ where: { suiteRunId, headersSealed: { not: null } } })).toBe(count - 7);
  });
});

describe('the workspace lock of an enqueue', () => {
  it('another workspace enqueues, and rows may refer to the locked workspace, while a request holds it', async () => {
    const a = await createTenant(api.db);
    const b = await createTenant(api.db);
    await applyProject(api.db, a.workspace.id, sampleProject('shop', { count: 2 }));
    await applyProject(api.db, b.workspace.id, sampleProject('shop', { count: 1 }));
    const duringLock: { bStatus?: number; referred?: boolean } = {};
    await createRuns(
      api.db,
      deriveKeys(api.config.secret),
      {
        workspaceId: a.workspace.id,
        request: {
          target: { mode: 'suite', projectSlug: 'shop', suiteSlug: 'smoke' },
          baseUrl: null,
          headers: null,
          variables: null,
          secretVariables: null,
          evidence: null,
          retries: null,
          workers: null,
          deploymentId: null,
        },
        targetPolicy: enqueuePolicy(api.config.targetPolicy),
        scopes: ['run'],
      },
      async () => {
        // Inside A's creating transaction, its workspace row locked: neither of these may wait for it.
        const b1 = await request(api.app)
          .post('/api/v1/runs')
          .set(bearer(b.key))
          .send({ projectSlug: 'shop', suiteSlug: 'smoke' });
        duringLock.bStatus = b1.status;
        // What the foreign key check of any row referring to workspace A takes (a worker's artifacts, say).
        await api.db.$transaction(async (tx) => {
          await tx.$executeRaw`SET LOCAL lock_timeout = '3s'`;
          await tx.$queryRaw`SELECT 1 FROM workspaces WHERE id = ${a.workspace.id} FOR KEY SHARE`;
        });
        duringLock.referred = true;
      },
    );
    expect(duringLock).toEqual({ bStatus: 201, referred: true });
  });

  it('a planned test of another workspace creates nothing', async () => {
    const a = await createTenant(api.db);
    const b = await createTenant(api.db);
    const applied = await applyProject(api.db, b.workspace.id, sampleProject('shop', { count: 1 }));
    const foreign = nth(nth(applied.suites, 0).tests, 0);
    await expect(
      api.db.$transaction((tx) =>
        insertRuns(tx, {
          workspaceId: a.workspace.id,
          suiteId: null,
          tests: [{ id: foreign.id, enabled: true, baseUrl: 'http://127.0.0.1:2' }],
          headersKey: deriveKeys(api.config.secret).headers,
        }),
      ),
    ).rejects.toThrow(/not tests of workspace/);
    expect(await api.db.run.count({ where: { workspaceId: a.workspace.id } })).toBe(0);
  });
});
