import request from 'supertest';
import { applyProject } from '../../packages/admin/src/operations';
import { openHeaders, deriveKeys } from '@testrun/core/secrets';
import { runViewUrl, suiteRunViewUrl, viewLinkTerms } from '@testrun/core/view-links';
import { createTenant, sampleProject } from '../support/harness';
import { bearer, buildTestApi, jobIdsIn, type TestApi } from './api-harness';
import { anyString, bodyOf, nth, stringMatching, wire } from './typed';

/** The evidence policy a run gets when neither its request, test nor project says otherwise. */
const DEFAULT_EVIDENCE = { trace: 'on-failure', video: 'off', screenshots: 'on-failure' };

let api: TestApi;
beforeAll(() => {
  api = buildTestApi();
});
afterAll(async () => {
  await api.close();
});

async function tenantWithProject(
  opts: Parameters<typeof sampleProject>[1] = {},
  plan: { maxActiveRuns?: number } = {},
) {
  const tenant = await createTenant(api.db, plan);
  const applied = await applyProject(api.db, tenant.workspace.id, sampleProject('shop', opts));
  /** The id of the first test of the first suite. */
  const firstTestId = nth(nth(applied.suites, 0).tests, 0).id;
  return { ...tenant, applied, firstTestId };
}

/** Every job in the queue, whatever its state. */
const jobIds = () => jobIdsIn(api.queue);

describe('POST /api/v1/runs — the three modes', () => {
  it('single test: 201 {runId}, one queued run with the test snapshot, one job whose payload is the id only', async () => {
    const t = await tenantWithProject({ count: 1 });
    const testId = t.firstTestId;
    const before = await jobIds();
    const res = await request(api.app).post('/api/v1/runs').set(bearer(t.key)).send({ testId });
    expect(res.status).toBe(201);
    const { runId } = bodyOf(res, wire.runCreated);
    const run = await api.db.run.findUniqueOrThrow({ where: { id: runId } });
    expect(run).toMatchObject({
      status: 'queued',
      workspaceId: t.workspace.id,
      testId,
      testName: 'smoke test 1',
      baseUrl: 'http://127.0.0.1:2',
      suiteRunId: null,
      headersSealed: null,
    });
    expect(run.steps).toEqual([{ action: 'goto', url: '/' }]);
    const job = await api.queue.getJob(runId);
    expect(job?.data).toEqual({ runId });
    expect((await jobIds()).filter((id) => !before.includes(id))).toEqual([runId]);
  });

  it('suite: 201 {suiteRunId}; one run per test; disabled test created skipped; counters and status', async () => {
    const t = await tenantWithProject({ count: 3, disabled: 1 });
    const res = await request(api.app)
      .post('/api/v1/runs')
      .set(bearer(t.key))
      .send({ projectSlug: 'shop', suiteSlug: 'smoke' });
    expect(res.status).toBe(201);
    const { suiteRunId } = bodyOf(res, wire.suiteRunCreated);
    const suiteRun = await api.db.suiteRun.findUniqueOrThrow({
      where: { id: suiteRunId },
      include: { runs: { orderBy: { position: 'asc' } } },
    });
    // A child created skipped has left `queued`: by the aggregate rule the suite run is running.
    expect(suiteRun).toMatchObject({
      status: 'queued',
      totalCount: 3,
      queuedCount: 2,
      skippedCount: 1,
      runningCount: 0,
      passedCount: 0,
    });
    expect(suiteRun.runs.map((r) => [r.testName, r.status, r.skipReason])).toEqual([
      ['smoke test 1', 'queued', null],
      ['smoke test 2', 'queued', null],
      ['smoke test 3', 'skipped', 'test_disabled'],
    ]);
    for (const r of suiteRun.runs) {
      const job = await api.queue.getJob(r.id);
      if (r.status === 'queued') expect(job?.data).toEqual({ runId: r.id });
      else expect(job).toBeUndefined();
    }

    const get = await request(api.app).get(`/api/v1/suite-runs/${suiteRunId}`).set(bearer(t.key));
    expect(get.status).toBe(200);
    expect(bodyOf(get, wire.suiteRun)).toEqual({
      id: suiteRunId,
      status: 'queued',
      total_count: 3,
      passed_count: 0,
      failed_count: 0,
      error_count: 0,
      skipped_count: 1,
      flaky_count: 0,
      suiteRunUrl: suiteRunViewUrl(
        'http://testrun.example',
        deriveKeys(api.config.secret).view,
        suiteRunId,
        viewLinkTerms({ createdAt: suiteRun.createdAt, version: 0 }),
      ),
      tests: suiteRun.runs.map((r) => ({
        runId: r.id,
        name: r.testName,
        status: r.status,
        skipReason: r.skipReason,
        durationMs: null,
        flaky: false,
        attempts: 0,
      })),
      created_at: suiteRun.createdAt.toISOString(),
      started_at: null,
      finished_at: null,
      duration_ms: null,
      rerun_of: null,
      deployment_id: stringMatching(/^dep_/),
      queue_wait: { waited_ms: null, runs_ahead: 0, reason: 'waiting_for_worker' },
    });
  });

  it('suite whose tests are all disabled: suite run created skipped, no jobs', async () => {
    const t = await tenantWithProject({ count: 2, disabled: 2 });
    const res = await request(api.app)
      .post('/api/v1/runs')
      .set(bearer(t.key))
      .send({ projectSlug: 'shop', suiteSlug: 'smoke' });
    const { suiteRunId } = bodyOf(res, wire.suiteRunCreated);
    const get = await request(api.app).get(`/api/v1/suite-runs/${suiteRunId}`).set(bearer(t.key));
    const suiteRun = bodyOf(get, wire.suiteRun);
    expect(suiteRun).toMatchObject({ status: 'skipped', total_count: 2, skipped_count: 2 });
    for (const entry of suiteRun.tests) expect(await api.queue.getJob(entry.runId)).toBeUndefined();
  });

  it('project: 201 {runIds} in suite then test order; archived tests and suites are not run', async () => {
    const t = await createTenant(api.db);
    const file = sampleProject('shop', { count: 2, suites: ['a', 'b', 'c'] });
    await applyProject(api.db, t.workspace.id, file);
    // Archive suite b and test a/t2 by applying a smaller file.
    const [a, , c] = file.suites;
    if (!a || !c) throw new Error('the sample project has suites a, b and c');
    const smaller = { ...file, suites: [{ ...a, tests: [nth(a.tests, 0)] }, c] };
    await applyProject(api.db, t.workspace.id, smaller);
    const res = await request(api.app)
      .post('/api/v1/runs')
      .set(bearer(t.key))
      .send({ projectSlug: 'shop', baseUrl: 'https://preview.example/x' });
    expect(res.status).toBe(201);
    const { runIds } = bodyOf(res, wire.runsCreated);
    const runs = await api.db.run.findMany({ where: { id: { in: runIds } } });
    const byId = new Map(runs.map((r) => [r.id, r]));
    expect(runIds.map((id) => byId.get(id)?.testName)).toEqual(['a test 1', 'c test 1', 'c test 2']);
    expect(runs.every((r) => r.suiteRunId === null && r.baseUrl === 'https://preview.example/x')).toBe(true);
    for (const id of runIds) expect((await api.queue.getJob(id))?.data).toEqual({ runId: id });
  });

  it("workers: a Playwright test's run gets the request's workers over its config's; a step test's steps do not change", async () => {
    const t = await tenantWithProject({ count: 2 });
    const [pw, step] = nth(t.applied.suites, 0).tests;
    const playwright = { bundle: `sha256:${'0'.repeat(64)}`, config: 'c.ts', file: 'a.spec.ts', line: 1, column: 1 };
    const definition = { ...playwright, titlePath: ['t'], project: 'app', browser: 'chromium', tags: [], workers: 1 };
    await api.db.test.update({ where: { id: pw?.id }, data: { steps: { playwright: definition } } });
    const res = await request(api.app)
      .post('/api/v1/runs')
      .set(bearer(t.key))
      .send({ projectSlug: 'shop', suiteSlug: 'smoke', workers: 3 });
    expect(res.status).toBe(201);
    const runs = await api.db.run.findMany({ where: { workspaceId: t.workspace.id }, orderBy: { position: 'asc' } });
    expect(runs.map((r) => [r.testId, r.steps])).toEqual([
      [pw?.id, { playwright: { ...definition, workers: 3 } }],
      [step?.id, [{ action: 'goto', url: '/' }]],
    ]);
    for (const workers of [0, 1.5, '2'])
      expect(
        (await request(api.app).post('/api/v1/runs').set(bearer(t.key)).send({ projectSlug: 'shop', workers })).status,
      ).toBe(400);
  });

  it('headers are sealed per run (AAD = run id) and never returned', async () => {
    const t = await tenantWithProject({ count: 2 });
    const headers = { Authorization: 'Basic c2VjcmV0OnNlY3JldA==', 'x-vercel-protection-bypass': 'bypass-value-123' };
    const res = await request(api.app)
      .post('/api/v1/runs')
      .set(bearer(t.key))
      .send({ projectSlug: 'shop', suiteSlug: 'smoke', headers });
    const { suiteRunId } = bodyOf(res, wire.suiteRunCreated);
    const runs = await api.db.run.findMany({ where: { suiteRunId }, orderBy: { position: 'asc' } });
    const keys = deriveKeys(api.config.secret);
    const sealedOf = (run: (typeof runs)[number]) => {
      if (!run.headersSealed) throw new Error(`run ${run.id} has no sealed headers`);
      return run.headersSealed;
    };
    for (const r of runs) {
      expect(Buffer.from(sealedOf(r)).toString('latin1')).not.toContain('bypass-value-123');
      expect(openHeaders(keys.headers, r.id, sealedOf(r))).toEqual(headers);
    }
    const [first, second] = [nth(runs, 0), nth(runs, 1)];
    expect(() => openHeaders(keys.headers, second.id, sealedOf(first))).toThrow();
    const get = await request(api.app).get(`/api/v1/runs/${first.id}`).set(bearer(t.key));
    expect(JSON.stringify(get.body)).not.toContain('bypass-value-123');
  });
});

describe('GET /api/v1/runs/:runId', () => {
  it('returns exactly the contract fields, with a Link header to the view', async () => {
    const t = await tenantWithProject({ count: 1 });
    const post = await request(api.app).post('/api/v1/runs').set(bearer(t.key)).send({ testId: t.firstTestId });
    const { runId } = bodyOf(post, wire.runCreated);
    const res = await request(api.app).get(`/api/v1/runs/${runId}`).set(bearer(t.key));
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    const { createdAt } = await api.db.run.findUniqueOrThrow({ where: { id: runId }, select: { createdAt: true } });
    expect(bodyOf(res, wire.run)).toEqual({
      id: runId,
      status: 'queued',
      result_summary: 'Queued; waiting for a worker.',
      error: null,
      skip_reason: null,
      evidence: DEFAULT_EVIDENCE,
      test_id: t.firstTestId,
      test_name: 'smoke test 1',
      suite_run_id: null,
      deployment_id: stringMatching(/^dep_/),
      created_at: createdAt.toISOString(),
      started_at: null,
      finished_at: null,
      duration_ms: null,
      attempts: 0,
      retries: 0,
      flaky: false,
      previous_attempts: [],
      blocked_request_count: 0,
      // Still waiting, first of its workspace in line: why, not yet how long.
      queue_wait: { waited_ms: null, runs_ahead: 0, reason: 'waiting_for_worker' },
    });
    const terms = viewLinkTerms({ createdAt, version: 0 });
    const url = runViewUrl('http://testrun.example', deriveKeys(api.config.secret).view, runId, terms);
    expect(res.headers.link).toBe(`<${url}>; rel="alternate"; type="text/html"`);
  });

  it('error object {code, message, step} only when the status is error; skip_reason when skipped', async () => {
    const t = await tenantWithProject({ count: 3, disabled: 1 });
    const post = await request(api.app).post('/api/v1/runs').set(bearer(t.key)).send({ projectSlug: 'shop' });
    const [errored, failed, skipped] = bodyOf(post, wire.runsCreated).runIds;
    if (!errored || !failed || !skipped) throw new Error('three runs were created');
    const startedAt = new Date('2026-11-22T10:00:00.250Z');
    const finishedAt = new Date('2026-11-22T10:00:02.000Z');
    const timed = { startedAt, finishedAt, durationMs: 1_700, attempt: 2 };
    const createdAt = async (id: string) =>
      (await api.db.run.findUniqueOrThrow({ where: { id }, select: { createdAt: true } })).createdAt.toISOString();
    // What the worker records; `attempt` 2 is a claim taken again after a lost worker, not a second attempt.
    const timings = async (id: string, testName: string, runsAhead: number) => ({
      test_id: (await api.db.run.findUniqueOrThrow({ where: { id } })).testId,
      test_name: testName,
      suite_run_id: null,
      deployment_id: stringMatching(/^dep_/),
      created_at: await createdAt(id),
      started_at: startedAt.toISOString(),
      finished_at: finishedAt.toISOString(),
      duration_ms: 1_700,
      attempts: 1,
      retries: 0,
      flaky: false,
      previous_attempts: [],
      blocked_request_count: 0,
      // Its place in the workspace's line when enqueued; started "before" it was created here, so 0 ms.
      queue_wait: {
        waited_ms: 0,
        runs_ahead: runsAhead,
        reason: runsAhead > 0 ? 'workspace_runs_ahead' : 'waiting_for_worker',
      },
    });
    await api.db.run.update({
      where: { id: errored },
      data: {
        ...timed,
        status: 'error',
        resultSummary: 'Target unreachable.',
        outcomeCode: 'target_unreachable',
        outcomeMessage: 'connect ECONNREFUSED 127.0.0.1:9',
        outcomeStep: 1,
      },
    });
    await api.db.run.update({
      where: { id: failed },
      data: {
        ...timed,
        status: 'failed',
        resultSummary: 'Failed at step 2.',
        outcomeCode: 'expectation_failed',
        outcomeMessage: 'text differs',
        outcomeStep: 2,
      },
    });
    const e = await request(api.app).get(`/api/v1/runs/${errored}`).set(bearer(t.key));
    expect(bodyOf(e, wire.run)).toEqual({
      id: errored,
      status: 'error',
      result_summary: 'Target unreachable.',
      error: { code: 'target_unreachable', message: 'connect ECONNREFUSED 127.0.0.1:9', step: 1 },
      skip_reason: null,
      evidence: DEFAULT_EVIDENCE,
      ...(await timings(errored, 'smoke test 1', 0)),
    });
    const f = await request(api.app).get(`/api/v1/runs/${failed}`).set(bearer(t.key));
    expect(bodyOf(f, wire.run)).toEqual({
      id: failed,
      status: 'failed',
      result_summary: 'Failed at step 2.',
      error: null,
      skip_reason: null,
      evidence: DEFAULT_EVIDENCE,
      ...(await timings(failed, 'smoke test 2', 1)),
    });
    const s = await request(api.app).get(`/api/v1/runs/${skipped}`).set(bearer(t.key));
    expect(bodyOf(s, wire.run)).toEqual({
      id: skipped,
      status: 'skipped',
      result_summary: 'Skipped: the test is disabled.',
      error: null,
      skip_reason: 'test_disabled',
      evidence: DEFAULT_EVIDENCE,
      // Never started: no start, no duration, no attempt; it ended when it was created.
      test_id: (await api.db.run.findUniqueOrThrow({ where: { id: skipped } })).testId,
      test_name: 'smoke test 3',
      suite_run_id: null,
      deployment_id: stringMatching(/^dep_/),
      created_at: await createdAt(skipped),
      started_at: null,
      finished_at: anyString(),
      duration_ms: null,
      attempts: 0,
      retries: 0,
      flaky: false,
      previous_attempts: [],
      blocked_request_count: 0,
    });
  });
});

describe('documents without a key', () => {
  it('serves the OpenAPI document and the problem catalogue', async () => {
    const o = await request(api.app).get('/api/v1/openapi.json');
    expect(o.status).toBe(200);
    expect(o.body).toMatchObject({ openapi: '3.1.0' });
    const p = await request(api.app).get('/api/v1/problems/plan_limit_exceeded');
    expect(p.status).toBe(200);
    expect(p.body).toMatchObject({
      code: 'plan_limit_exceeded',
      status: 422,
      title: anyString(),
      description: anyString(),
    });
  });

  it('/healthz and /readyz answer 200 with Postgres and Redis up', async () => {
    expect((await request(api.app).get('/healthz')).status).toBe(200);
    const r = await request(api.app).get('/readyz');
    expect(r.status).toBe(200);
    expect(r.body).toEqual({ status: 'ready', checks: { postgres: 'ok', redis: 'ok' } });
  });

  it('echoes a sane X-Request-Id and replaces an insane one', async () => {
    const a = await request(api.app).get('/healthz').set('X-Request-Id', 'ci-build-42.step:3');
    expect(a.headers['x-request-id']).toBe('ci-build-42.step:3');
    const b = await request(api.app).get('/healthz').set('X-Request-Id', 'bad id with spaces');
    expect(b.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
  });
});
