import request from 'supertest';
import { applyProject } from '../../packages/admin/src/operations';
import { finishRun, startRun } from '@testrun/core/runs';
import { createTenant, sampleProject } from '../support/harness';
import { bearer, buildTestApi, type TestApi } from './api-harness';
import { bodyOf, nth, wire } from './typed';

// Conditional GETs of a run and a suite run: a strong ETag of the body, 304 for If-None-Match, and
// with Prefer: wait=N a 304 only once N seconds passed without a change.
let api: TestApi;
beforeAll(() => {
  api = buildTestApi();
});
afterAll(async () => {
  await api.close();
});

async function tenant() {
  const t = await createTenant(api.db);
  await applyProject(api.db, t.workspace.id, sampleProject('shop', { count: 2 }));
  const suiteRunId = bodyOf(
    await request(api.app).post('/api/v1/runs').set(bearer(t.key)).send({ projectSlug: 'shop', suiteSlug: 'smoke' }),
    wire.suiteRunCreated,
  ).suiteRunId;
  const runs = await api.db.run.findMany({ where: { suiteRunId }, orderBy: { position: 'asc' } });
  return { ...t, suiteRunId, runIds: runs.map((r) => r.id) };
}

const STRONG_ETAG = /^"[A-Za-z0-9_-]{32}"$/;

describe('ETag and If-None-Match on GET run and GET suite run', () => {
  it.each(['run', 'suite run'] as const)('gives the %s a strong ETag and answers 304 to it', async (kind) => {
    const t = await tenant();
    const path = kind === 'run' ? `/api/v1/runs/${nth(t.runIds, 0)}` : `/api/v1/suite-runs/${t.suiteRunId}`;
    const first = await request(api.app).get(path).set(bearer(t.key));
    expect(first.status).toBe(200);
    const etag = String(first.headers.etag);
    expect(etag).toMatch(STRONG_ETAG);
    // The same body, the same tag.
    expect((await request(api.app).get(path).set(bearer(t.key))).headers.etag).toBe(etag);

    const unchanged = await request(api.app).get(path).set(bearer(t.key)).set('If-None-Match', etag);
    expect(unchanged.status).toBe(304);
    expect(unchanged.text).toBe('');
    expect(unchanged.headers.etag).toBe(etag);
    // A list naming it, and a weak form of it, match too (RFC 9110's weak comparison); another tag does not.
    expect((await request(api.app).get(path).set(bearer(t.key)).set('If-None-Match', `"x", W/${etag}`)).status).toBe(
      304,
    );
    expect((await request(api.app).get(path).set(bearer(t.key)).set('If-None-Match', '"x"')).status).toBe(200);

    await startRun(api.db, nth(t.runIds, 0), 2);
    const changed = await request(api.app).get(path).set(bearer(t.key)).set('If-None-Match', etag);
    expect(changed.status).toBe(200);
    expect(changed.headers.etag).not.toBe(etag);
    expect(changed.body).toMatchObject({ status: 'running' });
  });

  it('with Prefer: wait=N holds a matching If-None-Match until the run changes, then answers 200', async () => {
    const t = await tenant();
    const runId = nth(t.runIds, 0);
    const path = `/api/v1/runs/${runId}`;
    const etag = String((await request(api.app).get(path).set(bearer(t.key))).headers.etag);
    let answered = false;
    const polled = request(api.app)
      .get(path)
      .set(bearer(t.key))
      .set('Prefer', 'wait=30')
      .set('If-None-Match', etag)
      .then((res) => {
        answered = true;
        return res;
      });
    await new Promise((resolve) => setTimeout(resolve, 700));
    expect(answered).toBe(false);
    await startRun(api.db, runId, 2);
    const res = await polled;
    expect(res.status).toBe(200);
    expect(bodyOf(res, wire.run).status).toBe('running');
    expect(res.headers['preference-applied']).toBe('wait=30');
    expect(res.headers.etag).not.toBe(etag);
  });

  it('answers 304 after N seconds without a change, and a stale If-None-Match at once', async () => {
    const t = await tenant();
    const path = `/api/v1/suite-runs/${t.suiteRunId}`;
    const etag = String((await request(api.app).get(path).set(bearer(t.key))).headers.etag);
    const unchanged = await request(api.app)
      .get(path)
      .set(bearer(t.key))
      .set('Prefer', 'wait=1')
      .set('If-None-Match', etag);
    expect(unchanged.status).toBe(304);
    expect(unchanged.headers['preference-applied']).toBe('wait=1');
    expect(unchanged.headers.etag).toBe(etag);

    // The client is behind: the current body comes back without waiting (no Preference-Applied).
    await startRun(api.db, nth(t.runIds, 0), 2);
    const behind = await request(api.app)
      .get(path)
      .set(bearer(t.key))
      .set('Prefer', 'wait=30')
      .set('If-None-Match', etag);
    expect(behind.status).toBe(200);
    expect(behind.headers['preference-applied']).toBeUndefined();
    expect(bodyOf(behind, wire.suiteRun).status).toBe('running');
  });

  it('answers a terminal resource that matches with 304 at once, even when asked to wait', async () => {
    const t = await tenant();
    const runId = nth(t.runIds, 0);
    await startRun(api.db, runId, 2);
    await finishRun(api.db, runId, 1, { status: 'passed', resultSummary: 'Passed.' });
    const path = `/api/v1/runs/${runId}`;
    const etag = String((await request(api.app).get(path).set(bearer(t.key))).headers.etag);
    const res = await request(api.app).get(path).set(bearer(t.key)).set('Prefer', 'wait=30').set('If-None-Match', etag);
    expect(res.status).toBe(304);
    expect(res.headers['preference-applied']).toBe('wait=30');
  });

  it('a 404 stays a 404 whatever If-None-Match says', async () => {
    const t = await tenant();
    const res = await request(api.app)
      .get('/api/v1/runs/run_doesnotexist')
      .set(bearer(t.key))
      .set('If-None-Match', '*');
    expect(res.status).toBe(404);
  });
});
