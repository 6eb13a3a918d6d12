// An API process killed with SIGKILL while a POST with an Idempotency-Key is inside its creating
// transaction: the dead request's key is reclaimable within seconds (its lease is no longer renewed),
// the retry creates the runs once, and the killed request created nothing.
import { Client } from 'pg';
import request from 'supertest';
import { applyProject } from '../../packages/admin/src/operations';
import { createTenant, sampleProject } from '../support/harness';
import { freePort, spawnService } from '../support/processes';
import { bearer, buildTestApi, type TestApi } from './api-harness';
import { bodyOf, wire } from './typed';

let api: TestApi;
beforeAll(() => {
  api = buildTestApi();
});
afterAll(async () => {
  await api.close();
});

async function until(check: () => boolean | Promise<boolean>, what: () => string): Promise<void> {
  for (let i = 0; i < 300; i++) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`timed out waiting for ${what()}`);
}

it('a retry after the API died mid-POST succeeds within a few Retry-After periods', async () => {
  const t = await createTenant(api.db);
  await applyProject(api.db, t.workspace.id, sampleProject('shop', { count: 2 }));
  const body = { projectSlug: 'shop', suiteSlug: 'smoke' };
  const key = `crash-${t.tag}`;

  // Hold the workspace row, so the POST's transaction waits inside it (at the plan-limit check).
  const holder = new Client({ connectionString: process.env.DATABASE_URL });
  await holder.connect();
  await holder.query('BEGIN');
  // NO KEY UPDATE: the key claim (a foreign key to the workspace) passes, the plan-limit check waits.
  await holder.query('SELECT 1 FROM workspaces WHERE id = $1 FOR NO KEY UPDATE', [t.workspace.id]);

  const port = await freePort();
  const doomed = spawnService('api', { PORT: String(port), LOG_LEVEL: 'info' });
  try {
    await until(
      () => doomed.output().includes('"message":"listening"'),
      () => `the API to listen: ${doomed.output()}`,
    );
    const inFlight = fetch(`http://127.0.0.1:${port}/api/v1/runs`, {
      method: 'POST',
      headers: { Authorization: `Bearer ${t.key}`, 'Idempotency-Key': key, 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    })
      .then(async (res) => `answered ${res.status} ${await res.text()}`)
      .catch(() => 'connection lost');
    let answered = '';
    void inFlight.then((text) => (answered = text));
    await until(
      async () => {
        // Not on `holder`: inside its transaction pg_stat_activity is a frozen snapshot.
        const [waiting] = await api.db.$queryRaw<{ n: number }[]>`
        SELECT count(*)::int AS n FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`;
        return (waiting?.n ?? 0) > 0;
      },
      () => `the POST to wait inside its transaction (${answered}) ${doomed.output()}`,
    );
    const claimed = await holder.query('SELECT state::text FROM idempotency_records WHERE key = $1', [key]);
    expect(claimed.rows).toEqual([{ state: 'in_progress' }]);

    doomed.child.kill('SIGKILL');
    await doomed.exited;
    expect(await inFlight).toBe('connection lost');
  } finally {
    doomed.child.kill('SIGKILL');
    await holder.query('ROLLBACK');
    await holder.end();
  }

  // The client retries as told (Retry-After: 1) with the same key.
  const statuses: number[] = [];
  let created: request.Response | undefined;
  for (let attempt = 0; attempt < 10 && !created; attempt++) {
    const res = await request(api.app).post('/api/v1/runs').set(bearer(t.key)).set('Idempotency-Key', key).send(body);
    statuses.push(res.status);
    if (res.status === 201) created = res;
    else await new Promise((resolve) => setTimeout(resolve, Number(res.headers['retry-after'] ?? '1') * 1000));
  }
  expect(statuses.filter((s) => s !== 409 && s !== 201)).toEqual([]);
  if (!created) throw new Error(`the retry never succeeded: ${statuses.join(', ')}`);
  const { suiteRunId } = bodyOf(created, wire.suiteRunCreated);
  // Exactly the retry's runs exist: the killed request's transaction left nothing behind.
  expect(await api.db.suiteRun.count({ where: { workspaceId: t.workspace.id } })).toBe(1);
  expect(await api.db.run.count({ where: { workspaceId: t.workspace.id } })).toBe(2);
  expect(await api.db.suiteRun.findUnique({ where: { id: suiteRunId } })).not.toBeNull();
});
