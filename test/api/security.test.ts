// Over 300 lines on purpose: every security case of the API (keys, tenancy, headers, limits) shares
// one API instance and one set of tenants; a split would start them again per file.
import request from 'supertest';
import {
  applyProject,
  changeApiKey,
  removeMember,
  setWorkspacePlan,
  addMember,
  createApiKey,
} from '../../packages/admin/src/operations';
import { generateApiKey } from '@testrun/core/api-keys';
import { createTenant, sampleProject } from '../support/harness';
import { bearer, buildTestApi, type TestApi } from './api-harness';
import { anyNumber, anyString, bodyOf, nth, problemOf, wire } from './typed';

let api: TestApi;
beforeAll(() => {
  api = buildTestApi();
});
afterAll(async () => {
  await api.close();
});

function expect401(res: request.Response) {
  expect(res.status).toBe(401);
  expect(res.headers['www-authenticate']).toBe('Bearer');
  expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
  expect(problemOf(res, 'unauthorized')).toMatchObject({ status: 401, type: '/api/v1/problems/unauthorized' });
}

describe('401', () => {
  let key: string;
  beforeAll(async () => {
    key = (await createTenant(api.db)).key;
  });

  it.each([
    ['missing', undefined],
    ['not Bearer', 'Basic dXNlcjpwYXNz'],
    ['Bearer without a key', 'Bearer '],
    ['malformed (no prefix)', 'Bearer abc'],
  ])('%s', async (_name, header) => {
    const req = request(api.app).get('/api/v1/runs/run_x');
    expect401(await (header ? req.set('Authorization', header) : req));
  });

  it('malformed checksum', async () => {
    const last = key.at(-1) === 'a' ? 'b' : 'a';
    expect401(
      await request(api.app)
        .get('/api/v1/runs/run_x')
        .set(bearer(key.slice(0, -1) + last)),
    );
  });

  it('well-formed but unknown', async () => {
    expect401(await request(api.app).get('/api/v1/runs/run_x').set(bearer(generateApiKey().key)));
  });

  it('revoked', async () => {
    const t = await createTenant(api.db);
    expect((await request(api.app).get('/api/v1/runs/run_x').set(bearer(t.key))).status).toBe(404);
    await changeApiKey(api.db, t.keyId, 'revoke', api.announce);
    expect401(await request(api.app).get('/api/v1/runs/run_x').set(bearer(t.key)));
  });

  it('check order: a malformed JSON body with a bad key is 401, not 400', async () => {
    const res = await request(api.app)
      .post('/api/v1/runs')
      .set(bearer('trk_nope'))
      .set('Content-Type', 'application/json')
      .send('{oops');
    expect401(res);
  });

  it('the Bearer scheme is case-insensitive', async () => {
    expect((await request(api.app).get('/api/v1/runs/run_x').set('Authorization', `bearer ${key}`)).status).toBe(404);
  });

  it('failed authentications are limited per address (429 with Retry-After), then a valid key from there too', async () => {
    const own = buildTestApi({ env: { RATE_LIMIT_UNAUTHENTICATED_PER_MINUTE: '3' }, db: api.db });
    try {
      const statuses: number[] = [];
      for (let i = 0; i < 5; i++)
        statuses.push((await request(own.app).get('/api/v1/runs/run_x').set(bearer(generateApiKey().key))).status);
      expect(statuses).toEqual([401, 401, 401, 429, 429]);
      const limited = await request(own.app).get('/api/v1/runs/run_x');
      problemOf(limited, 'rate_limited');
      expect(Number(limited.headers['retry-after'])).toBeGreaterThan(0);
      // The address is locked out until its window ends; other addresses: test/api/auth-faults.test.ts.
      problemOf(await request(own.app).get('/api/v1/runs/run_x').set(bearer(key)), 'rate_limited');
    } finally {
      await own.close();
    }
  });
});

describe('403', () => {
  it('key_paused: refused on the Free plan; on a paid plan the flag has no effect until the workspace returns to Free', async () => {
    const t = await createTenant(api.db, { plan: 'free' });
    await changeApiKey(api.db, t.keyId, 'pause', api.announce);
    const res = await request(api.app).get('/api/v1/runs/run_x').set(bearer(t.key));
    expect(res.status).toBe(403);
    expect(res.body).toMatchObject({ code: 'key_paused', status: 403 });
    expect(res.headers['content-type']).toMatch(/^application\/problem\+json/);
    await setWorkspacePlan(api.db, t.workspace.id, { plan: 'team' }, api.announce);
    expect((await request(api.app).get('/api/v1/runs/run_x').set(bearer(t.key))).status).toBe(404);
    await setWorkspacePlan(api.db, t.workspace.id, { plan: 'free' }, api.announce);
    problemOf(await request(api.app).get('/api/v1/runs/run_x').set(bearer(t.key)), 'key_paused');
    await changeApiKey(api.db, t.keyId, 'resume', api.announce);
    expect((await request(api.app).get('/api/v1/runs/run_x').set(bearer(t.key))).status).toBe(404);
  });

  it("key_creator_not_member: the creator left the workspace; another member's key still works", async () => {
    const t = await createTenant(api.db);
    await addMember(api.db, t.workspace.id, `other-${t.tag}@example.test`);
    const other = await createApiKey(api.db, {
      workspaceId: t.workspace.id,
      creatorEmail: `other-${t.tag}@example.test`,
      name: 'other',
    });
    await removeMember(api.db, t.workspace.id, t.email, api.announce);
    const res = await request(api.app).post('/api/v1/runs').set(bearer(t.key)).send({ projectSlug: 'x' });
    expect(res.status).toBe(403);
    problemOf(res, 'key_creator_not_member');
    expect((await request(api.app).get('/api/v1/runs/run_x').set(bearer(other.key))).status).toBe(404);
  });

  it('revoked wins over paused (401), and a rejected request creates nothing', async () => {
    const t = await createTenant(api.db, { plan: 'free' });
    await applyProject(api.db, t.workspace.id, sampleProject('shop'));
    await changeApiKey(api.db, t.keyId, 'pause', api.announce);
    expect((await request(api.app).post('/api/v1/runs').set(bearer(t.key)).send({ projectSlug: 'shop' })).status).toBe(
      403,
    );
    await changeApiKey(api.db, t.keyId, 'revoke', api.announce);
    expect401(await request(api.app).post('/api/v1/runs').set(bearer(t.key)).send({ projectSlug: 'shop' }));
    expect(await api.db.run.count({ where: { workspaceId: t.workspace.id } })).toBe(0);
  });
});

describe('last_used_at', () => {
  it('is recorded on use', async () => {
    const t = await createTenant(api.db);
    expect((await api.db.apiKey.findUniqueOrThrow({ where: { id: t.keyId } })).lastUsedAt).toBeNull();
    await request(api.app).get('/api/v1/runs/run_x').set(bearer(t.key));
    // The write is off the request path: poll the row rather than assume it has landed.
    let used: Date | null = null;
    for (let i = 0; i < 50 && !used; i++) {
      used = (await api.db.apiKey.findUniqueOrThrow({ where: { id: t.keyId } })).lastUsedAt;
      if (!used) await new Promise((r) => setTimeout(r, 20));
    }
    expect(used).toBeInstanceOf(Date);
  });
});

describe('workspace isolation', () => {
  it('foreign ids give a 404 byte-identical to ids that never existed, on every route', async () => {
    const a = await createTenant(api.db);
    const b = await createTenant(api.db);
    const appliedA = await applyProject(api.db, a.workspace.id, sampleProject('shop', { count: 2 }));
    await applyProject(api.db, b.workspace.id, sampleProject('other', { count: 1 }));
    const suite = await request(api.app)
      .post('/api/v1/runs')
      .set(bearer(a.key))
      .send({ projectSlug: 'shop', suiteSlug: 'smoke' });
    const single = await request(api.app)
      .post('/api/v1/runs')
      .set(bearer(a.key))
      .send({ testId: nth(nth(appliedA.suites, 0).tests, 0).id });
    expect([suite.status, single.status]).toEqual([201, 201]);

    // Each pair: A's real thing asked by B, and a never-existing thing of the same shape.
    const foreignRunId = bodyOf(single, wire.runCreated).runId;
    const fakeRunId = foreignRunId.slice(0, -4) + 'zzzz';
    const foreignSuiteRunId = bodyOf(suite, wire.suiteRunCreated).suiteRunId;
    const fakeSuiteRunId = foreignSuiteRunId.slice(0, -4) + 'zzzz';
    const foreignTestId = nth(nth(appliedA.suites, 0).tests, 0).id;
    const fakeTestId = foreignTestId.slice(0, -4) + 'zzzz';
    const cases: Array<[string, () => request.Test, () => request.Test]> = [
      [
        'GET run',
        () => request(api.app).get(`/api/v1/runs/${foreignRunId}`),
        () => request(api.app).get(`/api/v1/runs/${fakeRunId}`),
      ],
      [
        'GET suite run',
        () => request(api.app).get(`/api/v1/suite-runs/${foreignSuiteRunId}`),
        () => request(api.app).get(`/api/v1/suite-runs/${fakeSuiteRunId}`),
      ],
      [
        'POST test',
        () => request(api.app).post('/api/v1/runs').send({ testId: foreignTestId }),
        () => request(api.app).post('/api/v1/runs').send({ testId: fakeTestId }),
      ],
    ];
    for (const [name, foreign, fake] of cases) {
      const f = await foreign().set(bearer(b.key));
      const n = await fake().set(bearer(b.key));
      expect([name, f.status]).toEqual([name, 404]);
      expect(
        f.text
          .replace(foreignRunId, fakeRunId)
          .replace(foreignSuiteRunId, fakeSuiteRunId)
          .replace(foreignTestId, fakeTestId),
      ).toBe(n.text);
      expect(f.headers['content-type']).toBe(n.headers['content-type']);
      expect(f.text).not.toContain('smoke test');
    }
    // Project and suite slugs: A's "shop" asked by B is the same bytes as a slug no one has.
    const projectFromB = await request(api.app).post('/api/v1/runs').set(bearer(b.key)).send({ projectSlug: 'shop' });
    const neverExisted = await request(api.app).post('/api/v1/runs').set(bearer(b.key)).send({ projectSlug: 'nope' });
    expect(projectFromB.status).toBe(404);
    expect(projectFromB.text).toBe(neverExisted.text.replace('nope', 'shop'));
    const suiteFromB = await request(api.app)
      .post('/api/v1/runs')
      .set(bearer(b.key))
      .send({ projectSlug: 'shop', suiteSlug: 'smoke' });
    const neverSuite = await request(api.app)
      .post('/api/v1/runs')
      .set(bearer(b.key))
      .send({ projectSlug: 'nope', suiteSlug: 'smoke' });
    expect(suiteFromB.status).toBe(404);
    expect(suiteFromB.text).toBe(neverSuite.text.replace('nope', 'shop'));
    // And B's own project works, so the 404s above are about ownership, not breakage.
    expect((await request(api.app).post('/api/v1/runs').set(bearer(b.key)).send({ projectSlug: 'other' })).status).toBe(
      201,
    );
    expect(await api.db.run.count({ where: { workspaceId: b.workspace.id } })).toBe(1);
  });
});

describe('secrets never leave', () => {
  it('API key and header values appear in no response and no log line; logs carry requestId, workspaceId, status, duration', async () => {
    const own = buildTestApi({ db: api.db });
    try {
      const t = await createTenant(api.db);
      await applyProject(api.db, t.workspace.id, sampleProject('shop', { count: 1 }));
      const secretValue = 'Basic c3VwZXItc2VjcmV0LXZhbHVl';
      const responses = [
        await request(own.app)
          .post('/api/v1/runs')
          .set(bearer(t.key))
          .send({
            projectSlug: 'shop',
            suiteSlug: 'smoke',
            headers: { Authorization: secretValue, 'x-bypass': 'bypass-secret-42' },
          }),
        await request(own.app)
          .post('/api/v1/runs')
          .set(bearer(t.key))
          .send({ projectSlug: 'shop', headers: { Host: 'bypass-secret-42' } }),
        await request(own.app)
          .post('/api/v1/runs')
          .set(bearer(t.key))
          .send({ projectSlug: 'shop', headers: { 'x-a': `bypass-secret-42\r\n` } }),
        await request(own.app)
          .get('/api/v1/runs/run_x')
          .set(bearer(t.key.slice(0, -1))),
      ];
      const { suiteRunId } = bodyOf(nth(responses, 0), wire.suiteRunCreated);
      const suite = await request(own.app).get(`/api/v1/suite-runs/${suiteRunId}`).set(bearer(t.key));
      for (const res of [...responses, suite]) {
        const all = res.text + JSON.stringify(res.headers);
        expect(all).not.toContain(t.key);
        expect(all).not.toContain('bypass-secret-42');
        expect(all).not.toContain(secretValue);
      }
      const logs = own.logs.text();
      expect(logs).not.toContain(t.key);
      expect(logs).not.toContain(t.key.slice(0, -1));
      expect(logs).not.toContain('bypass-secret-42');
      expect(logs).not.toContain(secretValue);
      const access = own.logs
        .lines()
        .map((l) => JSON.parse(l) as Record<string, unknown>)
        .filter((l) => l.message === 'request');
      expect(access).toHaveLength(5);
      expect(access[0]).toMatchObject({
        requestId: anyString(),
        workspaceId: t.workspace.id,
        status: 201,
        durationMs: anyNumber(),
        method: 'POST',
        path: '/api/v1/runs',
      });
      // Job payloads hold the id only.
      const run = nth(await api.db.run.findMany({ where: { suiteRunId } }), 0);
      const job = await own.queue.getJob(run.id);
      expect(JSON.stringify(job?.data)).toBe(JSON.stringify({ runId: run.id }));
    } finally {
      await own.close();
    }
  });

  it('view tokens are masked in access logs', async () => {
    const own = buildTestApi({ db: api.db });
    try {
      await request(own.app).get('/view/suite-runs/srun_x/SECRETTOKENSECRETTOKEN?x=1');
      expect(own.logs.text()).not.toContain('SECRETTOKENSECRETTOKEN');
      expect(own.logs.text()).toContain('/view/suite-runs/srun_x/[token]');
    } finally {
      await own.close();
    }
  });
});
