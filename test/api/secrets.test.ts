// Secrets over the API: PUT (an upsert), GET (names and dates) and DELETE at the workspace's and a
// project's level, the same stored, sealed secrets the admin CLI manages and runs use; another
// workspace's project reads as a missing one; a value never leaves in an answer, a header, a log
// line, a listing or a metric.
import request from 'supertest';
import { compileValidator, Secret, SecretList, VARIABLE_LIMITS } from '@testrun/contracts';
import { deriveKeys, loadStoredSecrets } from '@testrun/core/secrets';
import { applyProject } from '../../packages/admin/src/operations';
import type { SecretListOutput } from '../../packages/admin/src/secret-commands';
import { adminJson, runAdmin } from '../support/admin';
import { createTenant, sampleProject } from '../support/harness';
import { expectProblem } from '../support/problems';
import { bearer, buildTestApi, type TestApi } from './api-harness';
import { anyString, bodyOf } from './typed';

const secretBody = compileValidator(Secret);
const listBody = compileValidator(SecretList);

let api: TestApi;
beforeAll(() => {
  api = buildTestApi({ env: { METRICS_PORT: '' } });
});
afterAll(async () => {
  await api.close();
});

/** Every answer of this file, to look for values in afterwards. */
const answers: request.Response[] = [];
const kept = async (req: request.Test) => {
  const res = await req;
  answers.push(res);
  return res;
};

const VALUE = 'sv-4e1b7c90d2-value';
const OTHER = 'sv-second-77aa15-value';

async function deployTenant() {
  const t = await createTenant(api.db, { scopes: ['deploy'] });
  const project = await applyProject(api.db, t.workspace.id, sampleProject('shop'));
  const as = (req: request.Test) => kept(req.set(bearer(t.key)));
  return { ...t, projectId: project.projectId, as };
}

describe('project secrets', () => {
  it('PUT creates (201) then replaces (200), GET lists names and dates, DELETE removes (204) then 404', async () => {
    const t = await deployTenant();
    const put = (value: string) =>
      t.as(request(api.app).put('/api/v1/projects/shop/secrets/API_TOKEN').send({ value }));
    const createdRes = await put(VALUE);
    expect(createdRes.status).toBe(201);
    const created = bodyOf(createdRes, secretBody);
    expect(created).toEqual({
      name: 'API_TOKEN',
      project_slug: 'shop',
      created_at: anyString(),
      updated_at: created.created_at,
    });
    const replacedRes = await put(OTHER);
    expect(replacedRes.status).toBe(200);
    const replaced = bodyOf(replacedRes, secretBody);
    expect(replaced.created_at).toBe(created.created_at);
    expect(Date.parse(replaced.updated_at)).toBeGreaterThanOrEqual(Date.parse(created.updated_at));
    // The value a run of the project opens is the last one set, sealed as the admin CLI seals it.
    const stored = await loadStoredSecrets(api.db, deriveKeys(api.config.secret).headers, t.workspace.id, t.projectId);
    expect(stored).toEqual({ API_TOKEN: OTHER });

    const list = await t.as(request(api.app).get('/api/v1/projects/shop/secrets'));
    expect(list.status).toBe(200);
    expect(bodyOf(list, listBody)).toEqual({ secrets: [replaced] });
    // The workspace's own list does not hold the project's.
    expect((await t.as(request(api.app).get('/api/v1/secrets'))).body).toEqual({ secrets: [] });

    const del = await t.as(request(api.app).delete('/api/v1/projects/shop/secrets/API_TOKEN'));
    expect(del.status).toBe(204);
    expect(del.text).toBe('');
    expectProblem(await t.as(request(api.app).delete('/api/v1/projects/shop/secrets/API_TOKEN')), 'not_found');
    expect((await t.as(request(api.app).get('/api/v1/projects/shop/secrets'))).body).toEqual({ secrets: [] });
  });

  it("another workspace's project is 404, answered exactly as a project that does not exist", async () => {
    const owner = await deployTenant();
    await owner.as(request(api.app).put('/api/v1/projects/shop/secrets/A').send({ value: VALUE }));
    const stranger = await createTenant(api.db, { scopes: ['deploy'] });
    const as = (req: request.Test) => kept(req.set(bearer(stranger.key)));
    for (const [theirs, missing] of [
      [request(api.app).get('/api/v1/projects/shop/secrets'), request(api.app).get('/api/v1/projects/shop/secrets')],
      [
        request(api.app).put('/api/v1/projects/shop/secrets/A').send({ value: 'x' }),
        request(api.app).put('/api/v1/projects/shop/secrets/A').send({ value: 'x' }),
      ],
      [
        request(api.app).delete('/api/v1/projects/shop/secrets/A'),
        request(api.app).delete('/api/v1/projects/shop/secrets/A'),
      ],
    ] as const) {
      const a = await as(theirs);
      expectProblem(a, 'not_found');
      // The same request in a workspace with no project at all.
      const alone = await createTenant(api.db, { scopes: ['deploy'] });
      const b = await kept(missing.set(bearer(alone.key)));
      expect(b.status).toBe(a.status);
      expect(b.body).toEqual(a.body);
    }
    // Untouched: the owner's secret is still there, with its value.
    expect(
      await loadStoredSecrets(api.db, deriveKeys(api.config.secret).headers, owner.workspace.id, owner.projectId),
    ).toEqual({
      A: VALUE,
    });
  });
});

describe('workspace secrets', () => {
  it('live with no project; the admin CLI lists what the API set, and a run of any project gets them', async () => {
    const t = await deployTenant();
    expect((await t.as(request(api.app).put('/api/v1/secrets/SHARED').send({ value: VALUE }))).status).toBe(201);
    const list = await t.as(request(api.app).get('/api/v1/secrets'));
    expect(bodyOf(list, listBody).secrets.map((s) => [s.name, s.project_slug])).toEqual([['SHARED', null]]);
    const admin = await runAdmin(['secret', 'list', '--workspace', t.workspace.id, '--json']);
    expect((adminJson(admin) as SecretListOutput).secrets.map((s) => [s.name, s.projectSlug])).toEqual([
      ['SHARED', null],
    ]);
    expect(await loadStoredSecrets(api.db, deriveKeys(api.config.secret).headers, t.workspace.id, t.projectId)).toEqual(
      {
        SHARED: VALUE,
      },
    );
    expect((await t.as(request(api.app).delete('/api/v1/secrets/SHARED'))).status).toBe(204);
    expectProblem(await t.as(request(api.app).delete('/api/v1/secrets/SHARED')), 'not_found');
  });
});

describe('refusals', () => {
  it('a bad name is 400 invalid_secret_name; a bad value 400 invalid_body; one over the cap 422 limit_exceeded', async () => {
    const t = await deployTenant();
    expectProblem(
      await t.as(request(api.app).put('/api/v1/secrets/9lives').send({ value: VALUE })),
      'invalid_secret_name',
    );
    expectProblem(await t.as(request(api.app).delete('/api/v1/secrets/has-dash')), 'invalid_secret_name');
    expectProblem(
      await t.as(
        request(api.app)
          .put(`/api/v1/secrets/${'A'.repeat(65)}`)
          .send({ value: VALUE }),
      ),
      'invalid_secret_name',
    );
    expectProblem(await t.as(request(api.app).put('/api/v1/secrets/A').send({ value: '' })), 'invalid_body');
    expectProblem(
      await t.as(
        request(api.app)
          .put('/api/v1/secrets/A')
          .send({ value: `${VALUE}\u0000` }),
      ),
      'invalid_body',
    );
    expectProblem(
      await t.as(request(api.app).put('/api/v1/secrets/A').send({ value: VALUE, extra: VALUE })),
      'invalid_body',
    );
    expectProblem(await t.as(request(api.app).put('/api/v1/secrets/A').send({ secret: VALUE })), 'invalid_body');
    const long = VALUE + 'x'.repeat(VARIABLE_LIMITS.maxValueLength);
    expectProblem(await t.as(request(api.app).put('/api/v1/secrets/A').send({ value: long })), 'limit_exceeded');
    const broken = await t.as(
      request(api.app).put('/api/v1/secrets/A').set('Content-Type', 'application/json').send(`{"value": "${VALUE}`),
    );
    expectProblem(broken, 'invalid_body');
    expectProblem(
      await t.as(request(api.app).put('/api/v1/secrets/A').set('Content-Type', 'text/plain').send(VALUE)),
      'unsupported_media_type',
    );
    expect(await api.db.secretVariable.count({ where: { workspaceId: t.workspace.id } })).toBe(0);
  });

  it('other methods on a secret URL are 405 with Allow; PUT and DELETE are answered nowhere else', async () => {
    const t = await deployTenant();
    const patch = await t.as(request(api.app).patch('/api/v1/secrets/A').send({ value: VALUE }));
    expectProblem(patch, 'method_not_allowed');
    expect(patch.headers.allow).toBe('PUT, DELETE');
    const put = await t.as(request(api.app).put('/api/v1/runs/run_x').send({ value: VALUE }));
    expectProblem(put, 'method_not_allowed');
    expect(put.headers.allow).toBe('GET, HEAD');
  });
});

describe('the value never leaves', () => {
  it('in no answer, header, log line or metric of this file', async () => {
    expect(answers.length).toBeGreaterThan(20);
    for (const res of answers) {
      const seen = JSON.stringify(res.headers) + res.text;
      expect(seen).not.toContain(VALUE);
      expect(seen).not.toContain(OTHER);
    }
    const logs = api.logs.text();
    expect(logs).toContain('/api/v1/secrets');
    expect(logs).not.toContain(VALUE);
    expect(logs).not.toContain(OTHER);
    const metrics = await request(api.app).get('/metrics');
    expect(metrics.status).toBe(200);
    expect(metrics.text).toContain('/api/v1/projects/:projectSlug/secrets/:name');
    expect(metrics.text).not.toContain(VALUE);
  });
});
