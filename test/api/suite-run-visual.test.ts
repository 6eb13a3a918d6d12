import { createHash } from 'node:crypto';
import request from 'supertest';
import { applyProject } from '../../packages/admin/src/operations';
import { createTenant, insertSuiteRuns, sampleProject } from '../support/harness';
import { bearer, buildTestApi, type TestApi } from './api-harness';
import { bodyOf, wire } from './typed';

/**
 * A suite run's visual counters (docs/VISUAL.md): `visual_new_count` and `visual_changed_count`, the
 * visual changes of its runs not yet approved, in GET suite-run and the listing (whose resource the
 * `suite_run.finished` webhook carries). No worker here: the changes are rows as the worker writes them.
 */
let api: TestApi;
beforeAll(() => {
  api = buildTestApi();
});
afterAll(async () => {
  await api.close();
});

/** A suite run of three runs of the project's active deployment. */
async function suiteRun() {
  const t = await createTenant(api.db, { scopes: ['run', 'deploy'] });
  const applied = await applyProject(api.db, t.workspace.id, sampleProject('shop', { count: 3 }));
  const suite = applied.suites[0];
  if (!suite) throw new Error('the sample project has a suite');
  const rows = await insertSuiteRuns(api.db, t.workspace.id, suite.id, { baseUrl: 'http://127.0.0.1:2' });
  await api.db.run.updateMany({ where: { id: { in: rows.runIds } }, data: { deploymentId: applied.deploymentId } });
  const change = async (runId: string | undefined, name: string, kind: 'new' | 'changed', approved = false) => {
    const sha256 = createHash('sha256').update(`${runId}${name}`).digest('hex');
    await api.db.visualChange.create({
      data: {
        id: `vis_${t.tag}${name}`,
        workspaceId: t.workspace.id,
        runId: runId ?? '',
        deploymentId: applied.deploymentId,
        name,
        path: `e2e/tests/visual.spec.ts-snapshots/${name}`,
        kind,
        sha256,
        storageKey: `baselines/${t.workspace.id}/${sha256}`,
        contentType: 'image/png',
        sizeBytes: 1,
        ...(approved ? { approvedAt: new Date(), approvedByKeyName: 'ci' } : {}),
      },
    });
  };
  const get = (path: string) => request(api.app).get(path).set(bearer(t.key));
  return { id: rows.suiteRunId ?? '', runIds: rows.runIds, key: t.key, change, get };
}

it('has no visual counters while its runs found no visual change', async () => {
  const s = await suiteRun();
  const body = bodyOf(await s.get(`/api/v1/suite-runs/${s.id}`), wire.suiteRun);
  expect('visual_new_count' in body || 'visual_changed_count' in body).toBe(false);
});

it('counts the new and changed snapshots of all its runs not yet approved, in GET and the listing; 0 once approved', async () => {
  const s = await suiteRun();
  await s.change(s.runIds[0], 'home.png', 'changed');
  await s.change(s.runIds[0], 'heading.png', 'new');
  await s.change(s.runIds[1], 'cart.png', 'changed');
  await s.change(s.runIds[2], 'logo.png', 'new', true);
  const got = bodyOf(await s.get(`/api/v1/suite-runs/${s.id}`), wire.suiteRun);
  expect([got.visual_new_count, got.visual_changed_count]).toEqual([1, 2]);
  const listed = bodyOf(await s.get('/api/v1/suite-runs'), wire.suiteRunList).suite_runs.find((r) => r.id === s.id);
  expect([listed?.visual_new_count, listed?.visual_changed_count]).toEqual([1, 2]);

  const approved = await request(api.app)
    .post(`/api/v1/suite-runs/${s.id}/visual-changes/approve`)
    .set(bearer(s.key))
    .send({});
  expect(approved.status).toBe(200);
  const after = bodyOf(await s.get(`/api/v1/suite-runs/${s.id}`), wire.suiteRun);
  expect([after.visual_new_count, after.visual_changed_count]).toEqual([0, 0]);
});
