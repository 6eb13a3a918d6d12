import { once } from 'node:events';
import { request as httpRequest } from 'node:http';
import request from 'supertest';
import { applyProject } from '../../packages/admin/src/operations';
import { finishRun, startRun } from '@testrun/core/runs';
import { createTenant, sampleProject } from '../support/harness';
import { bearer, buildTestApi, type TestApi } from './api-harness';
import { bodyOf, nth, wire } from './typed';

// Two replicas on the same database: a wait held by one sees changes made by anyone.
let a: TestApi;
let b: TestApi;
let full: TestApi;
let shared: TestApi;
beforeAll(() => {
  a = buildTestApi();
  b = buildTestApi({ prefix: `${process.env.REDIS_PREFIX}-b`, db: a.db });
  // A replica that holds at most one wait.
  full = buildTestApi({ prefix: `${process.env.REDIS_PREFIX}-c`, db: a.db, env: { LONG_POLL_MAX_WAITERS: '1' } });
  // A replica of 3 places, of which one workspace may hold 2.
  shared = buildTestApi({
    prefix: `${process.env.REDIS_PREFIX}-d`,
    db: a.db,
    env: { LONG_POLL_MAX_WAITERS: '3', LONG_POLL_MAX_WAITERS_PER_WORKSPACE: '2' },
  });
});
afterAll(async () => {
  await shared.close();
  await full.close();
  await b.close();
  await a.close();
});

async function tenant() {
  const t = await createTenant(a.db);
  await applyProject(a.db, t.workspace.id, sampleProject('shop', { count: 2 }));
  const suiteRunId = bodyOf(
    await request(a.app).post('/api/v1/runs').set(bearer(t.key)).send({ projectSlug: 'shop', suiteSlug: 'smoke' }),
    wire.suiteRunCreated,
  ).suiteRunId;
  const runs = await a.db.run.findMany({ where: { suiteRunId }, orderBy: { position: 'asc' } });
  return { ...t, suiteRunId, runIds: runs.map((r) => r.id) };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('Prefer: wait=N on GET run and GET suite run', () => {
  it('holds the GET until the run changes, whichever process changed it, and says it waited', async () => {
    const t = await tenant();
    const runId = nth(t.runIds, 0);
    let answered = false;
    const polled = request(a.app)
      .get(`/api/v1/runs/${runId}`)
      .set(bearer(t.key))
      .set('Prefer', 'wait=30')
      .then((res) => {
        answered = true;
        return res;
      });
    await sleep(700);
    // Still waiting: nothing changed yet.
    expect(answered).toBe(false);
    expect(await startRun(a.db, runId, 2)).not.toBeNull();
    const res = await polled;
    // It woke on the change, long before its 30 s ran out, and shows the new state.
    expect(bodyOf(res, wire.run).status).toBe('running');
    expect(res.headers['preference-applied']).toBe('wait=30');
    expect(res.headers.vary).toMatch(/Prefer/);
  });

  it('holds a suite run until a child moves, on another replica than the one that changed it', async () => {
    const t = await tenant();
    const [first, second] = t.runIds;
    await startRun(a.db, first ?? '', 2);
    await startRun(a.db, second ?? '', 2);
    const seen = bodyOf(
      await request(b.app).get(`/api/v1/suite-runs/${t.suiteRunId}`).set(bearer(t.key)),
      wire.suiteRun,
    );
    expect(seen.status).toBe('running');
    // supertest sends on `then`: start the request now.
    const polled = request(b.app)
      .get(`/api/v1/suite-runs/${t.suiteRunId}`)
      .set(bearer(t.key))
      .set('Prefer', 'wait=30')
      .then((res) => res);
    await sleep(500);
    // The suite run stays `running`: a child's move alone must wake the wait.
    await finishRun(a.db, first ?? '', 1, { status: 'passed', resultSummary: 'Passed.' });
    const res = await polled;
    expect(bodyOf(res, wire.suiteRun)).toMatchObject({ status: 'running', passed_count: 1 });
    expect(res.headers['preference-applied']).toBe('wait=30');
  });

  it('answers at once for a terminal run, and after N seconds when nothing changes', async () => {
    const t = await tenant();
    const [first, second] = t.runIds;
    await startRun(a.db, first ?? '', 2);
    await finishRun(a.db, first ?? '', 1, { status: 'failed', resultSummary: 'Failed.' });
    const done = await request(a.app)
      .get(`/api/v1/runs/${first ?? ''}`)
      .set(bearer(t.key))
      .set('Prefer', 'wait=60');
    expect(bodyOf(done, wire.run).status).toBe('failed');
    const quiet = await request(a.app)
      .get(`/api/v1/runs/${second ?? ''}`)
      .set(bearer(t.key))
      .set('Prefer', 'wait=1');
    expect(bodyOf(quiet, wire.run).status).toBe('queued');
    expect(quiet.headers['preference-applied']).toBe('wait=1');
  });

  it('cuts a wait over 60 s to 60, and ignores a wait it cannot read', async () => {
    const t = await tenant();
    const [first] = t.runIds;
    await startRun(a.db, first ?? '', 2);
    await finishRun(a.db, first ?? '', 1, { status: 'passed', resultSummary: 'Passed.' });
    const long = await request(a.app)
      .get(`/api/v1/runs/${first ?? ''}`)
      .set(bearer(t.key))
      .set('Prefer', 'wait=3600');
    expect(long.headers['preference-applied']).toBe('wait=60');
    const odd = await request(a.app)
      .get(`/api/v1/runs/${first ?? ''}`)
      .set(bearer(t.key))
      .set('Prefer', 'wait=soon');
    expect(odd.status).toBe(200);
    expect(odd.headers['preference-applied']).toBeUndefined();
  });

  it("past the replica's cap, answers at once without Preference-Applied", async () => {
    const t = await tenant();
    const [first, second] = t.runIds;
    const held = request(full.app)
      .get(`/api/v1/runs/${first ?? ''}`)
      .set(bearer(t.key))
      .set('Prefer', 'wait=30');
    const heldDone = held.then((res) => res);
    await sleep(500);
    const refused = await request(full.app)
      .get(`/api/v1/runs/${second ?? ''}`)
      .set(bearer(t.key))
      .set('Prefer', 'wait=30');
    expect(bodyOf(refused, wire.run).status).toBe('queued');
    expect(refused.headers['preference-applied']).toBeUndefined();
    await startRun(a.db, first ?? '', 2);
    expect(bodyOf(await heldDone, wire.run).status).toBe('running');
  });

  it("past a workspace's share of the cap, answers that workspace at once while another still waits", async () => {
    const [greedy, other] = [await tenant(), await tenant()];
    const server = shared.app.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const poll = (t: { key: string }, path: string) =>
      request(server).get(path).set(bearer(t.key)).set('Prefer', 'wait=30');
    // The greedy workspace takes its two places (one run, and its suite run) and asks for a third.
    const held = [
      poll(greedy, `/api/v1/runs/${nth(greedy.runIds, 0)}`).then((res) => res),
      poll(greedy, `/api/v1/suite-runs/${greedy.suiteRunId}`).then((res) => res),
    ];
    for (let i = 0; i < 50 && shared.watcher.waiting < 2; i++) await sleep(100);
    expect(shared.watcher.waiting).toBe(2);
    const refused = await poll(greedy, `/api/v1/runs/${nth(greedy.runIds, 1)}`);
    expect(bodyOf(refused, wire.run).status).toBe('queued');
    expect(refused.headers['preference-applied']).toBeUndefined();
    // The replica still has a place, and another workspace gets it: its GET waits for the change.
    const waited = poll(other, `/api/v1/runs/${nth(other.runIds, 0)}`).then((res) => res);
    for (let i = 0; i < 50 && shared.watcher.waiting < 3; i++) await sleep(100);
    expect(shared.watcher.waiting).toBe(3);
    await startRun(a.db, nth(other.runIds, 0), 2);
    const res = await waited;
    expect(bodyOf(res, wire.run).status).toBe('running');
    expect(res.headers['preference-applied']).toBe('wait=30');
    // Once its waits end, the greedy workspace has its places again.
    await startRun(a.db, nth(greedy.runIds, 0), 2);
    for (const done of await Promise.all(held)) expect(done.headers['preference-applied']).toBe('wait=30');
    expect(shared.watcher.waiting).toBe(0);
    const again = poll(greedy, `/api/v1/runs/${nth(greedy.runIds, 1)}`).then((r) => r);
    for (let i = 0; i < 50 && shared.watcher.waiting < 1; i++) await sleep(100);
    expect(shared.watcher.waiting).toBe(1);
    await startRun(a.db, nth(greedy.runIds, 1), 2);
    expect((await again).headers['preference-applied']).toBe('wait=30');
    server.close();
  });

  it('lets go of a wait whose client hung up', async () => {
    const t = await tenant();
    const server = a.app.listen(0, '127.0.0.1');
    await once(server, 'listening');
    const { port } = server.address() as { port: number };
    const req = httpRequest({
      host: '127.0.0.1',
      port,
      path: `/api/v1/runs/${nth(t.runIds, 0)}`,
      headers: { authorization: `Bearer ${t.key}`, prefer: 'wait=30' },
    });
    req.on('error', () => undefined);
    req.end();
    await sleep(500);
    req.destroy();
    // The watcher forgets the wait once the connection is gone, well before the 30 s.
    for (let i = 0; i < 50 && a.watcher.waiting > 0; i++) await sleep(100);
    expect(a.watcher.waiting).toBe(0);
    server.close();
  });
});
