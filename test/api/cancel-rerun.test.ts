import { Redis } from 'ioredis';
import request from 'supertest';
import type { SuiteRun } from '@testrun/contracts';
import { applyProject } from '../../packages/admin/src/operations';
import { createLogger } from '@testrun/core/logger';
import { finishRun, runCancelChannel, startRun, type RunOutcome } from '@testrun/core/runs';
import { deriveKeys, openHeaders } from '@testrun/core/secrets';
import { Reconciler } from '@testrun/worker';
import { createTenant, sampleProject, testSecret } from '../support/harness';
import { present } from '../support/present';
import { bearer, buildTestApi, type TestApi } from './api-harness';
import { bodyOf, problemOf, wire } from './typed';

/**
 * Cancel (POST /runs/{id}/cancel, /suite-runs/{id}/cancel) and rerun (POST /suite-runs/{id}/rerun)
 * over HTTP against real Postgres and Redis, without a worker: runs are moved by core's own
 * transitions where a worker would move them.
 */
let api: TestApi;
const logger = createLogger({ service: 'test', level: 'error' });
const headersKey = () => deriveKeys(testSecret()).headers;

beforeAll(() => {
  api = buildTestApi();
});
afterAll(async () => {
  await api.close();
});

async function tenant(options: Parameters<typeof createTenant>[1] = {}) {
  const t = await createTenant(api.db, options);
  await applyProject(api.db, t.workspace.id, sampleProject('shop', { count: 4, disabled: 1 }));
  const post = (path: string, body?: object, key = t.key) => {
    const req = request(api.app).post(path).set(bearer(key));
    return body ? req.send(body) : req;
  };
  const suiteRun = async (extra: object = {}) =>
    bodyOf(await post('/api/v1/runs', { projectSlug: 'shop', suiteSlug: 'smoke', ...extra }), wire.suiteRunCreated)
      .suiteRunId;
  const children = (suiteRunId: string) => api.db.run.findMany({ where: { suiteRunId }, orderBy: { position: 'asc' } });
  return { ...t, post, suiteRun, children };
}

/** Ends a queued run the way a worker does: claim, then the terminal write. */
async function settle(runId: string, outcome: RunOutcome): Promise<void> {
  const claim = present(await startRun(api.db, runId, 3), `claim of ${runId}`);
  expect(await finishRun(api.db, runId, claim.attempt, outcome)).toBe(true);
}

/** Counters equal to a count of the children, as the contract asks. */
function expectExactCounters(s: SuiteRun): void {
  const count = (status: string) => s.tests.filter((t) => t.status === status).length;
  expect(s.total_count).toBe(s.tests.length);
  expect([s.passed_count, s.failed_count, s.error_count, s.skipped_count]).toEqual([
    count('passed'),
    count('failed'),
    count('error'),
    count('skipped'),
  ]);
}

describe('cancel', () => {
  it('a queued suite run: every child ends skipped (cancelled) at once, counters exact; a repeat changes nothing', async () => {
    const t = await tenant();
    const id = await t.suiteRun({ headers: { 'X-Preview': 'secret-preview-1' } });
    const res = await t.post(`/api/v1/suite-runs/${id}/cancel`);
    expect(res.status).toBe(202);
    const suiteRun = bodyOf(res, wire.suiteRun);
    expect(suiteRun.status).toBe('skipped');
    expect(suiteRun.tests.map((c) => [c.status, c.skipReason])).toEqual([
      ['skipped', 'cancelled'],
      ['skipped', 'cancelled'],
      ['skipped', 'cancelled'],
      ['skipped', 'test_disabled'],
    ]);
    expectExactCounters(suiteRun);
    expect((await t.children(id)).every((r) => r.headersSealed === null)).toBe(true);

    const again = await t.post(`/api/v1/suite-runs/${id}/cancel`);
    expect(again.status).toBe(202);
    expect(bodyOf(again, wire.suiteRun)).toEqual(suiteRun);

    const run = bodyOf(
      await request(api.app).get(`/api/v1/runs/${suiteRun.tests[0]?.runId}`).set(bearer(t.key)),
      wire.run,
    );
    expect(run).toMatchObject({ status: 'skipped', skip_reason: 'cancelled', error: null });
  });

  it('a running run is marked and its workers told on the Redis channel; the reconciler ends it if none does', async () => {
    const t = await tenant();
    const id = await t.suiteRun();
    const [first, second] = await t.children(id);
    const running = present(first, 'first child');
    const finished = present(second, 'second child');
    await settle(finished.id, { status: 'passed', resultSummary: 'Passed.' });
    present(await startRun(api.db, running.id, 3), 'claim');

    const subscriber = new Redis(present(process.env.REDIS_URL, 'REDIS_URL'));
    const messages: string[] = [];
    subscriber.on('message', (_channel: string, message: string) => messages.push(message));
    await subscriber.subscribe(runCancelChannel(api.config.redisPrefix));
    try {
      const res = await t.post(`/api/v1/suite-runs/${id}/cancel`);
      expect(res.status).toBe(202);
      const body = bodyOf(res, wire.suiteRun);
      // The running child waits for its worker; the queued one is skipped; the passed one stays.
      expect(body.tests.map((c) => c.status)).toEqual(['running', 'passed', 'skipped', 'skipped']);
      expect(body.status).toBe('running');
      for (let i = 0; i < 100 && messages.length === 0; i++) await new Promise((r) => setTimeout(r, 50));
      expect(messages).toEqual([running.id]);
    } finally {
      subscriber.disconnect();
    }
    const marked = await api.db.run.findUniqueOrThrow({ where: { id: running.id } });
    expect(marked.cancelRequestedAt).not.toBeNull();

    const reconciler = new Reconciler({ db: api.db, queue: api.queue, logger, cancelGraceMs: 0 });
    for (let i = 0; i < 50; i++) {
      const report = await reconciler.runOnce();
      if (report.ran) {
        expect(report.cancelled).toContain(running.id);
        break;
      }
      await new Promise((r) => setTimeout(r, 100));
    }
    const ended = bodyOf(await request(api.app).get(`/api/v1/runs/${running.id}`).set(bearer(t.key)), wire.run);
    expect(ended).toMatchObject({ status: 'error', error: { code: 'cancelled' }, skip_reason: null });
    const suiteRes = await request(api.app).get(`/api/v1/suite-runs/${id}`).set(bearer(t.key));
    expect(bodyOf(suiteRes, wire.suiteRun)).toMatchObject({
      status: 'error',
      passed_count: 1,
      error_count: 1,
      skipped_count: 2,
      failed_count: 0,
    });
    expectExactCounters(bodyOf(suiteRes, wire.suiteRun));
  });

  it('a terminal run is left as it is', async () => {
    const t = await tenant();
    const id = await t.suiteRun();
    const run = present((await t.children(id))[0], 'child');
    await settle(run.id, { status: 'failed', code: 'expectation_failed', resultSummary: 'Failed at step 1.' });
    const res = await t.post(`/api/v1/runs/${run.id}/cancel`);
    expect(res.status).toBe(202);
    expect(bodyOf(res, wire.run)).toMatchObject({ status: 'failed', result_summary: 'Failed at step 1.' });
  });

  it("another workspace's run or suite run is a 404 and is left alone; other methods are 405 with Allow: POST", async () => {
    const owner = await tenant();
    const other = await tenant();
    const id = await owner.suiteRun();
    const runId = present((await owner.children(id))[0], 'child').id;
    problemOf(await other.post(`/api/v1/suite-runs/${id}/cancel`), 'not_found');
    problemOf(await other.post(`/api/v1/runs/${runId}/cancel`), 'not_found');
    problemOf(await other.post('/api/v1/runs/run_unknown/cancel'), 'not_found');
    expect((await owner.children(id)).map((r) => r.status)).toEqual(['queued', 'queued', 'queued', 'skipped']);

    const res = await request(api.app).delete(`/api/v1/runs/${runId}/cancel`).set(bearer(owner.key));
    expect(res.status).toBe(405);
    expect(res.headers.allow).toBe('POST');
  });
});

describe('rerun', () => {
  /** A finished suite run of four: passed, failed, error, and the disabled test skipped. */
  async function mixed(t: Awaited<ReturnType<typeof tenant>>, extra: object = {}) {
    const id = await t.suiteRun(extra);
    const [a, b, c] = await t.children(id);
    await settle(present(a, 'a').id, { status: 'passed', resultSummary: 'Passed.' });
    await settle(present(b, 'b').id, { status: 'failed', code: 'expectation_failed', resultSummary: 'Failed.' });
    await settle(present(c, 'c').id, { status: 'error', code: 'target_unreachable', resultSummary: 'Error.' });
    return id;
  }

  it('only failed: a new suite run of exactly the failed and error tests, naming the original, with its headers', async () => {
    const t = await tenant();
    const headers = { 'X-Preview': 'secret-preview-2' };
    const original = await mixed(t, { headers, baseUrl: 'http://127.0.0.1:3' });
    const res = await t.post(`/api/v1/suite-runs/${original}/rerun`, { only: 'failed' });
    expect(res.status).toBe(201);
    const { suiteRunId } = bodyOf(res, wire.suiteRunCreated);
    const rerun = bodyOf(
      await request(api.app).get(`/api/v1/suite-runs/${suiteRunId}`).set(bearer(t.key)),
      wire.suiteRun,
    );
    expect(rerun).toMatchObject({ rerun_of: original, status: 'queued', total_count: 2 });
    expect(rerun.tests.map((c) => c.name)).toEqual(['smoke test 2', 'smoke test 3']);
    const runs = await t.children(suiteRunId);
    for (const run of runs) {
      expect(run.baseUrl).toBe('http://127.0.0.1:3');
      expect(openHeaders(headersKey(), run.id, present(run.headersSealed, 'sealed headers'))).toEqual(headers);
    }
    const originalRead = await request(api.app).get(`/api/v1/suite-runs/${original}`).set(bearer(t.key));
    expect(bodyOf(originalRead, wire.suiteRun).rerun_of).toBeNull();
    // Never in a response.
    expect(JSON.stringify(rerun)).not.toContain('secret-preview-2');
  });

  it('only all: every test of the original; idempotent like POST /runs', async () => {
    const t = await tenant();
    const original = await mixed(t);
    const send = () =>
      request(api.app)
        .post(`/api/v1/suite-runs/${original}/rerun`)
        .set(bearer(t.key))
        .set('Idempotency-Key', 'rerun-1')
        .send({ only: 'all' });
    const first = await send();
    expect(first.status).toBe(201);
    const again = await send();
    expect(again.status).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toEqual(first.body);
    const { suiteRunId } = bodyOf(first, wire.suiteRunCreated);
    const rerun = bodyOf(
      await request(api.app).get(`/api/v1/suite-runs/${suiteRunId}`).set(bearer(t.key)),
      wire.suiteRun,
    );
    expect(rerun.tests.map((c) => [c.name, c.status])).toEqual([
      ['smoke test 1', 'queued'],
      ['smoke test 2', 'queued'],
      ['smoke test 3', 'queued'],
      ['smoke test 4', 'skipped'],
    ]);
    expect(await api.db.suiteRun.count({ where: { rerunOf: original } })).toBe(1);
  });

  it('once the sealed copy is erased, a 422 names the fields to give again; given, the rerun is made', async () => {
    const t = await tenant();
    const original = await mixed(t, { headers: { 'X-Preview': 'v1' }, secretVariables: { TOKEN: 's3cret' } });
    await api.db.suiteRun.update({ where: { id: original }, data: { sealedUntil: new Date(Date.now() - 1000) } });
    const reconciler = new Reconciler({ db: api.db, queue: api.queue, logger });
    for (let i = 0; i < 50 && !(await reconciler.runOnce()).ran; i++) await new Promise((r) => setTimeout(r, 100));
    const erased = await api.db.suiteRun.findUniqueOrThrow({ where: { id: original } });
    expect([erased.headersSealed, erased.variablesSealed, erased.sealedFields]).toEqual([
      null,
      null,
      'headers,secretVariables',
    ]);

    const refused = await t.post(`/api/v1/suite-runs/${original}/rerun`, { only: 'failed' });
    expect(refused.status).toBe(422);
    const problem = problemOf(refused, 'rerun_secrets_expired');
    expect(problem.errors?.map((e) => e.path)).toEqual(['/headers', '/secretVariables']);
    expect(await api.db.suiteRun.count({ where: { rerunOf: original } })).toBe(0);

    const given = await t.post(`/api/v1/suite-runs/${original}/rerun`, {
      only: 'failed',
      headers: { 'X-Preview': 'v2' },
      secretVariables: { TOKEN: 'again' },
    });
    expect(given.status).toBe(201);
    const runs = await t.children(bodyOf(given, wire.suiteRunCreated).suiteRunId);
    expect(runs).toHaveLength(2);
    expect(openHeaders(headersKey(), present(runs[0], 'run').id, present(runs[0]?.headersSealed, 'headers'))).toEqual({
      'X-Preview': 'v2',
    });
  });

  it('refuses what it cannot rerun, creating nothing', async () => {
    const t = await tenant();
    const running = await t.suiteRun();
    problemOf(await t.post(`/api/v1/suite-runs/${running}/rerun`, { only: 'all' }), 'suite_run_not_finished');

    const passedOnly = await t.suiteRun();
    for (const run of (await t.children(passedOnly)).filter((r) => r.status === 'queued'))
      await settle(run.id, { status: 'passed', resultSummary: 'Passed.' });
    problemOf(await t.post(`/api/v1/suite-runs/${passedOnly}/rerun`, { only: 'failed' }), 'empty_suite');

    const invalid = await t.post(`/api/v1/suite-runs/${passedOnly}/rerun`, { only: 'some', extra: 1 });
    expect(invalid.status).toBe(400);
    expect(
      problemOf(invalid, 'invalid_body')
        .errors?.map((e) => e.path)
        .sort(),
    ).toEqual(['/extra', '/only']);

    const other = await tenant();
    problemOf(await other.post(`/api/v1/suite-runs/${passedOnly}/rerun`, { only: 'all' }), 'not_found');
    expect(await api.db.suiteRun.count({ where: { rerunOf: { in: [running, passedOnly] } } })).toBe(0);
  });

  it('plan limits apply as for POST /runs', async () => {
    const t = await tenant({ maxActiveRuns: 3 });
    const original = await mixed(t);
    // The original's runs are terminal; these three fill the limit.
    await t.suiteRun();
    const res = await t.post(`/api/v1/suite-runs/${original}/rerun`, { only: 'failed' });
    expect(problemOf(res, 'plan_limit_exceeded').detail).toContain('active runs');
  });
});
