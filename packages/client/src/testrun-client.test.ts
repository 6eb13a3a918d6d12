import type { Run, SuiteRun } from '@testrun/contracts';
import { backoffDelay } from './backoff';
import { TestrunApiError, TestrunNetworkError, TestrunWaitTimeoutError } from './errors';
import { TestrunClient } from './testrun-client';

/** A scripted fetch and a fake clock: sleeping advances time, so no test waits for real. */
function harness(responses: Array<(req: { url: string; init: RequestInit }) => Response | Error>) {
  let clock = 1_000_000;
  const calls: { url: string; method: string; headers: Record<string, string>; at: number; body?: string }[] = [];
  const sleeps: number[] = [];
  const fetchImpl = ((url: string, init: RequestInit) => {
    calls.push({
      url,
      method: String(init.method),
      headers: init.headers as Record<string, string>,
      at: clock,
      body: init.body as string | undefined,
    });
    const next = responses.shift();
    if (!next) return Promise.reject(new Error(`unexpected request ${url}`));
    const r = next({ url, init });
    return r instanceof Error ? Promise.reject(r) : Promise.resolve(r);
  }) as unknown as typeof fetch;
  const client = new TestrunClient({
    apiUrl: 'http://api.test/api/v1/',
    apiKey: 'trk_secret',
    fetch: fetchImpl,
    now: () => clock,
    sleep: (ms) => {
      sleeps.push(ms);
      clock += ms;
      return Promise.resolve();
    },
    random: () => 0.5,
  });
  /** The `i`-th request made, or a failed test when there was none. */
  const call = (i: number) => {
    const made = calls[i];
    if (!made) throw new Error(`request #${i} was never made (${calls.length} were)`);
    return made;
  };
  return { client, calls, call, sleeps, now: () => clock };
}

const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), {
    status,
    headers: { 'content-type': status >= 400 ? 'application/problem+json' : 'application/json', ...headers },
  });
const problem = (status: number, code: string, headers: Record<string, string> = {}) =>
  json(status, { type: `/api/v1/problems/${code}`, title: code, status, detail: `detail of ${code}`, code }, headers);
const run = (status: Run['status']): Run => ({
  id: 'run_1',
  status,
  result_summary: status,
  error: null,
  skip_reason: null,
  test_id: 'tst_1',
  test_name: 'Home page',
  deployment_id: null,
  suite_run_id: null,
  created_at: '2026-11-22T10:00:00.000Z',
  started_at: status === 'queued' ? null : '2026-11-22T10:00:00.020Z',
  finished_at: status === 'queued' || status === 'running' ? null : '2026-11-22T10:00:01.020Z',
  duration_ms: status === 'queued' || status === 'running' ? null : 1_000,
  attempts: status === 'queued' ? 0 : 1,
  retries: 0,
  flaky: false,
  previous_attempts: [],
  blocked_request_count: 0,
});
const netError = () => Object.assign(new TypeError('fetch failed'), { cause: { code: 'ECONNRESET' } });

describe('TestrunClient requests', () => {
  it('sends the key, an Idempotency-Key and the body, and strips /api/v1 from the base URL', async () => {
    const h = harness([() => json(201, { suiteRunId: 'srun_1' })]);
    const res = await h.client.enqueueSuite('shop', 'smoke', { baseUrl: 'https://preview.test' });
    expect(res.body).toEqual({ suiteRunId: 'srun_1' });
    expect(res.replayed).toBe(false);
    const call = h.call(0);
    expect(call.url).toBe('http://api.test/api/v1/runs');
    expect(call.headers.authorization).toBe('Bearer trk_secret');
    expect(call.headers['idempotency-key']).toMatch(/^[0-9a-f-]{36}$/);
    expect(JSON.parse(call.body ?? '')).toEqual({
      baseUrl: 'https://preview.test',
      projectSlug: 'shop',
      suiteSlug: 'smoke',
    });
  });

  it('retries a POST after a network fault, a 503 and a 409 with the same Idempotency-Key', async () => {
    const h = harness([
      () => netError(),
      () => problem(503, 'service_unavailable'),
      () => problem(409, 'idempotency_request_in_progress'),
      () => json(201, { runId: 'run_1' }, { 'Idempotent-Replayed': 'true' }),
    ]);
    const res = await h.client.enqueueTest('tst_1', {}, { idempotencyKey: 'k-1' });
    expect(res).toEqual({ body: { runId: 'run_1' }, idempotencyKey: 'k-1', replayed: true });
    expect(h.calls.map((c) => c.headers['idempotency-key'])).toEqual(['k-1', 'k-1', 'k-1', 'k-1']);
    expect(h.sleeps).toEqual([
      backoffDelay(0, { random: () => 0.5 }),
      backoffDelay(1, { random: () => 0.5 }),
      backoffDelay(2, { random: () => 0.5 }),
    ]);
  });

  it('honours Retry-After on 429 and otherwise backs off', async () => {
    const h = harness([
      () => problem(429, 'rate_limited', { 'Retry-After': '7' }),
      () => problem(429, 'rate_limited'),
      () => json(200, run('passed')),
    ]);
    await expect(h.client.getRun('run_1')).resolves.toEqual(run('passed'));
    expect(h.sleeps).toEqual([7_000, backoffDelay(1, { random: () => 0.5 })]);
    // The second request waited for the whole Retry-After.
    expect(h.call(1).at - h.call(0).at).toBe(7_000);
  });

  it('turns a problem body into a TestrunApiError and does not retry 4xx', async () => {
    const body = {
      type: '/api/v1/problems/invalid_body',
      title: 't',
      status: 400,
      detail: 'The body is invalid.',
      code: 'invalid_body',
      errors: [{ path: '/baseUrl', message: 'must be an absolute http(s) URL' }],
    };
    const h = harness([() => json(400, body)]);
    const err = await h.client.enqueueProject('shop').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(TestrunApiError);
    expect(err).toMatchObject({
      status: 400,
      code: 'invalid_body',
      detail: 'The body is invalid.',
      errors: body.errors,
    });
    expect(h.calls).toHaveLength(1);
  });

  it('gives up on a GET after a bounded number of faults', async () => {
    const h = harness(Array.from({ length: 5 }, () => () => problem(500, 'internal_error')));
    await expect(h.client.getSuiteRun('srun_1')).rejects.toMatchObject({ status: 500, code: 'internal_error' });
    expect(h.calls).toHaveLength(5);
  });

  it('does not retry a 409 on a GET', async () => {
    const h = harness([() => problem(409, 'idempotency_request_in_progress')]);
    await expect(h.client.getRun('run_1')).rejects.toMatchObject({ status: 409 });
  });

  it('reports a non-problem error body as unexpected_response and a network failure as TestrunNetworkError', async () => {
    const h = harness([
      () => new Response('<html>bad gateway</html>', { status: 404 }),
      ...Array.from({ length: 5 }, () => () => netError()),
    ]);
    await expect(h.client.getRun('run_1')).rejects.toMatchObject({ status: 404, code: 'unexpected_response' });
    await expect(h.client.getRun('run_1')).rejects.toBeInstanceOf(TestrunNetworkError);
  });
});

describe('TestrunClient waits', () => {
  const suite = (status: SuiteRun['status'], tests: SuiteRun['tests']): SuiteRun => ({
    id: 'srun_1',
    status,
    deployment_id: null,
    total_count: tests.length,
    passed_count: tests.filter((t) => t.status === 'passed').length,
    failed_count: 0,
    error_count: 0,
    skipped_count: 0,
    flaky_count: 0,
    suiteRunUrl: 'http://api.test/view/suite-runs/srun_1/tok',
    tests,
    created_at: '2026-11-22T10:00:00.000Z',
    started_at: null,
    finished_at: null,
    duration_ms: null,
    rerun_of: null,
  });
  /** The one test of the suite run these tests poll, in `status`. */
  const entry = (status: SuiteRun['status']): SuiteRun['tests'] => [
    { runId: 'run_1', name: 'a', status, skipReason: null, durationMs: null, flaky: false, attempts: 1 },
  ];

  it('polls a suite run at the interval until terminal, reporting progress', async () => {
    const h = harness([
      () => json(200, suite('queued', entry('queued'))),
      () => json(200, suite('running', entry('running'))),
      () => json(200, suite('passed', entry('passed'))),
    ]);
    const seen: string[] = [];
    const final = await h.client.waitForSuiteRun('srun_1', {
      pollIntervalMs: 2_000,
      onProgress: (s) => seen.push(s.status),
    });
    expect(final.status).toBe('passed');
    expect(seen).toEqual(['queued', 'running', 'passed']);
    expect(h.sleeps).toEqual([2_000, 2_000]);
    // Every poll asked the server to hold it; this server did not say it had, so the client slept.
    expect(h.call(0).headers.prefer).toBe('wait=25');
  });

  it('asks again at once after a poll the server held (Preference-Applied), and never long-polls with longPoll off', async () => {
    const held = { 'Preference-Applied': 'wait=25' };
    const h = harness([
      () => json(200, suite('queued', entry('queued')), held),
      () => json(200, suite('running', entry('running')), held),
      () => json(200, suite('passed', entry('passed')), held),
    ]);
    const final = await h.client.waitForSuiteRun('srun_1', { pollIntervalMs: 2_000, timeoutMs: 10_000 });
    expect(final.status).toBe('passed');
    expect(h.sleeps).toEqual([]);
    // The wait asked for never outlasts the budget (10 s, a second to spare).
    expect(h.call(0).headers.prefer).toBe('wait=9');

    const plain = harness([() => json(200, run('running')), () => json(200, run('passed'))]);
    await plain.client.waitForRun('run_1', { pollIntervalMs: 1_000, longPoll: false });
    expect(plain.call(0).headers.prefer).toBeUndefined();
    expect(plain.sleeps).toEqual([1_000]);
  });

  it('sends the last ETag as If-None-Match and takes a 304 as the same state', async () => {
    const held = { 'Preference-Applied': 'wait=25' };
    const h = harness([
      () => json(200, run('running'), { ...held, ETag: '"a"' }),
      () => new Response(null, { status: 304, headers: { ...held, ETag: '"a"' } }),
      () => json(200, run('passed'), { ...held, ETag: '"b"' }),
    ]);
    const seen: string[] = [];
    const final = await h.client.waitForRun('run_1', { onProgress: (r) => seen.push(r.status) });
    expect(final.status).toBe('passed');
    expect(seen).toEqual(['running', 'running', 'passed']);
    expect(h.call(0).headers['if-none-match']).toBeUndefined();
    expect(h.call(1).headers['if-none-match']).toBe('"a"');
    expect(h.call(2).headers['if-none-match']).toBe('"a"');
    expect(h.sleeps).toEqual([]);

    // A 304 to a GET that sent no If-None-Match is no answer the client can take.
    const s = harness([
      () => json(200, run('running'), { ETag: '"c"' }),
      () => new Response(null, { status: 304, headers: { ETag: '"c"' } }),
    ]);
    await expect(s.client.getRun('run_1')).resolves.toMatchObject({ status: 'running' });
    await expect(s.client.getRun('run_1')).rejects.toMatchObject({ status: 304 });
  });

  it('keeps waiting through 429s, sleeping as asked, and still reaches the verdict', async () => {
    const h = harness([
      () => json(200, run('running')),
      ...Array.from({ length: 3 }, () => () => problem(429, 'rate_limited', { 'Retry-After': '20' })),
      () => json(200, run('failed')),
    ]);
    const final = await h.client.waitForRun('run_1', { pollIntervalMs: 1_000 });
    expect(final.status).toBe('failed');
    expect(h.sleeps).toEqual([1_000, 20_000, 20_000, 20_000]);
  });

  it('stops at the budget with the last state seen', async () => {
    const h = harness(Array.from({ length: 10 }, () => () => json(200, run('running'))));
    const err = (await h.client
      .waitForRun('run_1', { timeoutMs: 5_000, pollIntervalMs: 2_000 })
      .catch((e: unknown) => e)) as TestrunWaitTimeoutError<Run>;
    expect(err).toBeInstanceOf(TestrunWaitTimeoutError);
    expect(err.last?.status).toBe('running');
    expect(err.message).toContain('wait budget of 5 s');
    // Polls at 0, 2 s, 4 s and a last one at the deadline (5 s).
    expect(h.calls).toHaveLength(4);
    expect(h.now() - 1_000_000).toBe(5_000);
  });

  it('does not sleep past the budget for a Retry-After longer than what is left', async () => {
    const h = harness([() => json(200, run('running')), () => problem(429, 'rate_limited', { 'Retry-After': '60' })]);
    await expect(h.client.waitForRun('run_1', { timeoutMs: 10_000, pollIntervalMs: 1_000 })).rejects.toBeInstanceOf(
      TestrunWaitTimeoutError,
    );
    expect(h.sleeps.every((ms) => ms < 60_000)).toBe(true);
  });

  it('rethrows a non-transient error at once (a 404 will not get better)', async () => {
    const h = harness([() => problem(404, 'not_found')]);
    await expect(h.client.waitForRun('run_1')).rejects.toMatchObject({ status: 404, code: 'not_found' });
  });

  it('waits for a set of runs, reading only those not yet terminal, in the given order', async () => {
    const r = (id: string, status: Run['status']) => json(200, { ...run(status), id });
    const h = harness([() => r('run_a', 'passed'), () => r('run_b', 'running'), () => r('run_b', 'failed')]);
    const runs = await h.client.waitForRuns(['run_a', 'run_b'], { pollIntervalMs: 500 });
    expect(runs.map((x) => `${x.id}:${x.status}`)).toEqual(['run_a:passed', 'run_b:failed']);
    expect(h.calls.map((c) => c.url.split('/').pop())).toEqual(['run_a', 'run_b', 'run_b']);
  });
});
