import request from 'supertest';
import { applyProject } from '../../packages/admin/src/operations';
import type { Db } from '@testrun/core/db';
import { createTenant, sampleProject } from '../support/harness';
import { bearer, buildTestApi, jobIdsIn, type TestApi } from './api-harness';
import { bodyOf, only, problemOf, wire } from './typed';

let api: TestApi;
beforeAll(() => {
  api = buildTestApi();
});
afterAll(async () => {
  await api.close();
});

const countRuns = (db: Db, workspaceId: string) => db.run.count({ where: { workspaceId } });

async function tenant(plan: Parameters<typeof createTenant>[1] = {}) {
  const t = await createTenant(api.db, plan);
  const applied = await applyProject(api.db, t.workspace.id, sampleProject('shop', { count: 2 }));
  const post = (key: string, body: unknown, app = api.app) =>
    request(app)
      .post('/api/v1/runs')
      .set(bearer(t.key))
      .set('Idempotency-Key', key)
      .send(body as object);
  return { ...t, applied, post };
}

async function waitingJobIds(): Promise<Set<string>> {
  return new Set(await jobIdsIn(api.queue, ['waiting', 'prioritized', 'delayed']));
}

describe('Idempotency-Key', () => {
  it('a replay gives the first status and body with Idempotent-Replayed: true, and creates nothing', async () => {
    const t = await tenant();
    const first = await t.post('deploy-123', { projectSlug: 'shop', suiteSlug: 'smoke' });
    expect(first.status).toBe(201);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    const jobsAfterFirst = await waitingJobIds();
    // Same body with its keys in another order is the same request.
    const again = await request(api.app)
      .post('/api/v1/runs')
      .set(bearer(t.key))
      .set('Idempotency-Key', 'deploy-123')
      .set('Content-Type', 'application/json')
      .send('{"suiteSlug":"smoke","projectSlug":"shop"}');
    expect(again.status).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.text).toBe(first.text);
    expect(await countRuns(api.db, t.workspace.id)).toBe(2);
    expect(await api.db.suiteRun.count({ where: { workspaceId: t.workspace.id } })).toBe(1);
    expect(await waitingJobIds()).toEqual(jobsAfterFirst);
  });

  it('the same key with a different body is 422 idempotency_key_reused and creates nothing', async () => {
    const t = await tenant();
    expect((await t.post('k1', { projectSlug: 'shop' })).status).toBe(201);
    const res = await t.post('k1', { projectSlug: 'shop', baseUrl: 'https://other.example' });
    expect(res.status).toBe(422);
    problemOf(res, 'idempotency_key_reused');
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(await countRuns(api.db, t.workspace.id)).toBe(2);
  });

  it('10 concurrent duplicates create exactly one set of runs; the others get 409 or the replay', async () => {
    const t = await tenant();
    const results = await Promise.all(
      Array.from({ length: 10 }, () => t.post('burst', { projectSlug: 'shop', suiteSlug: 'smoke' })),
    );
    const created = results.filter((r) => r.status === 201 && r.headers['idempotent-replayed'] === undefined);
    const replayed = results.filter((r) => r.status === 201 && r.headers['idempotent-replayed'] === 'true');
    const inProgress = results.filter((r) => r.status === 409);
    const original = bodyOf(only(created), wire.suiteRunCreated);
    expect(replayed.length + inProgress.length).toBe(9);
    for (const r of replayed) expect(r.body).toEqual(original);
    for (const r of inProgress) {
      problemOf(r, 'idempotency_request_in_progress');
      expect(r.headers['retry-after']).toBeDefined();
    }
    expect(await countRuns(api.db, t.workspace.id)).toBe(2);
    expect(await api.db.suiteRun.count({ where: { workspaceId: t.workspace.id } })).toBe(1);
    // A later retry gets the replay.
    const later = await t.post('burst', { projectSlug: 'shop', suiteSlug: 'smoke' });
    expect(later.headers['idempotent-replayed']).toBe('true');
    expect(later.body).toEqual(original);
  });

  it('holds across replicas: two apps, one database', async () => {
    const t = await tenant();
    const other = buildTestApi({ db: api.db });
    try {
      const [a, b] = await Promise.all([
        t.post('replicas', { projectSlug: 'shop' }),
        t.post('replicas', { projectSlug: 'shop' }, other.app),
      ]);
      expect([a.status, b.status].sort()).toEqual(a.status === 409 || b.status === 409 ? [201, 409] : [201, 201]);
      expect(await countRuns(api.db, t.workspace.id)).toBe(2);
    } finally {
      await other.close();
    }
  });

  it('the same key in two workspaces is independent', async () => {
    const a = await tenant();
    const b = await tenant();
    const ra = await a.post('shared-key', { projectSlug: 'shop' });
    const rb = await b.post('shared-key', { projectSlug: 'shop', baseUrl: 'https://b.example' });
    expect([ra.status, rb.status]).toEqual([201, 201]);
    expect(rb.headers['idempotent-replayed']).toBeUndefined();
    expect(bodyOf(rb, wire.runsCreated).runIds).not.toEqual(bodyOf(ra, wire.runsCreated).runIds);
    expect(await countRuns(api.db, b.workspace.id)).toBe(2);
  });

  it('404 and 422 are kept and replayed; 400 is not kept', async () => {
    const t = await tenant({ maxActiveRuns: 1 });
    const missing = await t.post('k404', { projectSlug: 'nope' });
    expect(missing.status).toBe(404);
    // Creating the project does not change the kept answer within 24 h.
    await applyProject(api.db, t.workspace.id, sampleProject('nope', { count: 1 }));
    const replay404 = await t.post('k404', { projectSlug: 'nope' });
    expect(replay404.status).toBe(404);
    expect(replay404.headers['idempotent-replayed']).toBe('true');
    expect(replay404.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(replay404.text).toBe(missing.text);

    const limited = await t.post('k422', { projectSlug: 'shop' });
    expect(limited.status).toBe(422);
    problemOf(limited, 'plan_limit_exceeded');
    const replay422 = await t.post('k422', { projectSlug: 'shop' });
    expect(replay422.headers['idempotent-replayed']).toBe('true');
    expect(replay422.text).toBe(limited.text);

    const bad = await t.post('k400', { projectSlug: 'shop', extra: 1 });
    expect(bad.status).toBe(400);
    const fixed = await t.post('k400', { projectSlug: 'nope' });
    expect(fixed.status).toBe(201);
    expect(fixed.headers['idempotent-replayed']).toBeUndefined();
    expect(await api.db.idempotencyRecord.count({ where: { workspaceId: t.workspace.id } })).toBe(3);
  });

  it('a key is kept 24 hours: after that the same key runs again', async () => {
    const t = await tenant();
    const first = await t.post('daily', { projectSlug: 'shop' });
    const record = await api.db.idempotencyRecord.findUniqueOrThrow({
      where: { workspaceId_key: { workspaceId: t.workspace.id, key: 'daily' } },
    });
    expect(record.expiresAt.getTime() - record.createdAt.getTime()).toBe(24 * 3600 * 1000);
    api.clock.offsetMs = 24 * 3600 * 1000 - 60_000;
    try {
      expect((await t.post('daily', { projectSlug: 'shop' })).headers['idempotent-replayed']).toBe('true');
      api.clock.offsetMs = 24 * 3600 * 1000 + 1_000;
      // Expired: a different body is no longer a reuse, it is a new request.
      const after = await t.post('daily', { projectSlug: 'shop', suiteSlug: 'smoke' });
      expect(after.status).toBe(201);
      expect(after.headers['idempotent-replayed']).toBeUndefined();
      bodyOf(after, wire.suiteRunCreated);
      expect(bodyOf(first, wire.runsCreated).runIds).toHaveLength(2);
      expect(await countRuns(api.db, t.workspace.id)).toBe(4);
    } finally {
      api.clock.offsetMs = 0;
    }
  });

  it('a key whose holder died (lease passed) is taken over; a live one gives 409', async () => {
    const t = await tenant();
    const now = Date.now();
    await api.db.idempotencyRecord.create({
      data: {
        workspaceId: t.workspace.id,
        key: 'stuck',
        requestHash: 'x',
        state: 'in_progress',
        lockedUntil: new Date(now + 60_000),
        expiresAt: new Date(now + 86_400_000),
      },
    });
    // Different hash than the stuck one: this is reuse of a live key.
    problemOf(await t.post('stuck', { projectSlug: 'shop' }), 'idempotency_key_reused');
    const { hashRequest } = await import('../../apps/api/src/services/idempotency');
    const { deriveKeys } = await import('@testrun/core/secrets');
    const hash = hashRequest(deriveKeys(api.config.secret).idempotency, 'POST', '/api/v1/runs', {
      projectSlug: 'shop',
    });
    await api.db.idempotencyRecord.update({
      where: { workspaceId_key: { workspaceId: t.workspace.id, key: 'stuck' } },
      data: { requestHash: hash },
    });
    const live = await t.post('stuck', { projectSlug: 'shop' });
    expect(live.status).toBe(409);
    problemOf(live, 'idempotency_request_in_progress');
    expect(await countRuns(api.db, t.workspace.id)).toBe(0);
    api.clock.offsetMs = 61_000;
    try {
      const taken = await t.post('stuck', { projectSlug: 'shop' });
      expect(taken.status).toBe(201);
      expect(await countRuns(api.db, t.workspace.id)).toBe(2);
    } finally {
      api.clock.offsetMs = 0;
    }
  });
});
