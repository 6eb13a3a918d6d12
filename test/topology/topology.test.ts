import type { ChildProcess } from 'node:child_process';
import { applyProject } from '../../packages/admin/src/operations';
import type { Db } from '@testrun/core/db';
import type { ProjectFile } from '@testrun/contracts';
import { expectSuiteConsistent } from '../chaos/steady-suite';
import { apiClient, freePort, spawnService, waitForLog, waitUntil } from '../e2e/support';
import { startFixtureSite, type FixtureSite } from '../fixtures/site';
import { createTenant, testDb } from '../support/harness';
import { present } from '../support/present';

/**
 * The deployed topology on one machine: 2 API processes and 3 worker processes (the built
 * JavaScript, as production starts it) sharing one Postgres database and one Redis prefix.
 * Several workspaces post suites through both replicas at once; every run passes, the work
 * spreads over every worker, the per-key rate limit and Idempotency-Key hold across the replicas
 * as one, and a worker killed with SIGKILL mid-load (another started in its place) loses nothing.
 * Lean on CPU: one run at a time per worker, short tests against the fixture site.
 */
jest.setTimeout(300_000);

const RATE_LIMIT = 20;
const WORKSPACES = 3;
const SUITES = 2;
const TESTS = 4;
/** Short locks and a reconciler pass a second: a dead worker's run moves on within seconds. */
const WORKER_ENV = {
  WORKER_CONCURRENCY: '1',
  WORKER_LOCK_DURATION_MS: '2000',
  WORKER_STALLED_INTERVAL_MS: '1000',
  RECONCILE_INTERVAL_MS: '1000',
  WORKER_VIDEO: 'off',
  LOG_LEVEL: 'info',
};

type Service = ReturnType<typeof spawnService>;
let db: Db;
let site: FixtureSite;
const children: ChildProcess[] = [];

/** Suites `s1`..`sN` of `tests` short passing tests each (long enough to be caught running). */
function project(baseUrl: string): ProjectFile {
  return {
    slug: 'topology',
    name: 'Topology',
    baseUrl,
    suites: Array.from({ length: SUITES }, (_, s) => ({
      slug: `s${s + 1}`,
      name: `Suite ${s + 1}`,
      tests: Array.from({ length: TESTS }, (_, t) => ({
        key: `t${t + 1}`,
        name: `Test ${t + 1}`,
        steps: [
          { action: 'goto' as const, url: '/' },
          { action: 'wait' as const, ms: 300 },
          { action: 'expectText' as const, selector: 'h1', text: 'Testrun Shop' },
        ],
      })),
    })),
  };
}

async function startApiProcess(): Promise<{ url: string; proc: Service }> {
  const port = await freePort();
  const proc = spawnService('api', {
    PORT: String(port),
    RATE_LIMIT_PER_MINUTE: String(RATE_LIMIT),
    LOG_LEVEL: 'info',
  });
  children.push(proc.child);
  await waitForLog(proc, 'listening');
  return { url: `http://127.0.0.1:${port}`, proc };
}

async function startWorker(): Promise<Service> {
  const proc = spawnService('worker', WORKER_ENV);
  children.push(proc.child);
  await waitForLog(proc, 'worker ready');
  return proc;
}

/** The ids of the runs a worker logged as started / finished (its JSON log lines carry runId). */
function runsLogged(proc: Service, msg: 'run started' | 'run finished'): string[] {
  return proc
    .output()
    .split('\n')
    .filter((line) => line.includes(`"msg":"${msg}"`) || line.includes(`"message":"${msg}"`))
    .map((line) => (JSON.parse(line) as { runId: string }).runId);
}

function post(url: string, key: string, body: unknown, idempotencyKey?: string): Promise<Response> {
  return fetch(`${url}/api/v1/runs`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${key}`,
      'content-type': 'application/json',
      ...(idempotencyKey ? { 'idempotency-key': idempotencyKey } : {}),
    },
    body: JSON.stringify(body),
  });
}

beforeAll(async () => {
  db = testDb();
  site = await startFixtureSite();
});

afterAll(async () => {
  for (const child of children) if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await site.close();
  await db.$disconnect();
});

it('2 API replicas and 3 workers share the load, the limits and the keys, and lose nothing to a killed worker', async () => {
  const apis = [await startApiProcess(), await startApiProcess()] as const;
  const [url0, url1] = [apis[0].url, apis[1].url];
  const replica = (i: number) => (i % 2 === 0 ? url0 : url1);
  const workers = [await startWorker(), await startWorker(), await startWorker()];

  // The per-key rate limit: a burst split over both replicas is limited as one.
  const limited = await createTenant(db);
  const burst = await Promise.all(
    Array.from({ length: RATE_LIMIT + 10 }, (_, i) =>
      fetch(`${replica(i)}/api/v1/suite-runs/srun_doesnotexist`, {
        headers: { authorization: `Bearer ${limited.key}` },
      }).then((r) => r.status),
    ),
  );
  expect(burst.filter((s) => s === 429)).toHaveLength(10);
  expect(burst.filter((s) => s !== 429)).toHaveLength(RATE_LIMIT);

  // Every workspace posts its suites at once, half through each replica; one of them also sends
  // the same Idempotency-Key to both replicas at the same time.
  const tenants = await Promise.all(Array.from({ length: WORKSPACES }, () => createTenant(db)));
  const first = present(tenants[0], 'the first workspace');
  for (const t of tenants) await applyProject(db, t.workspace.id, project(site.url));
  const idempotent = async (url: string) => {
    const res = await waitUntil(async () => {
      const r = await post(url, first.key, { projectSlug: 'topology', suiteSlug: 's1' }, 'topology-once');
      if (r.status === 409) return undefined; // the other replica holds the key right now
      return r;
    }, 100);
    expect(res.status).toBe(201);
    return ((await res.json()) as { suiteRunId: string }).suiteRunId;
  };
  const created = await Promise.all([
    idempotent(url0),
    idempotent(url1),
    ...tenants.flatMap((t, w) =>
      Array.from({ length: SUITES }, (_, s) => s)
        .filter((s) => w !== 0 || s !== 0)
        .map(async (s) => {
          const res = await post(replica(w + s), t.key, { projectSlug: 'topology', suiteSlug: `s${s + 1}` });
          expect(res.status).toBe(201);
          return ((await res.json()) as { suiteRunId: string }).suiteRunId;
        }),
    ),
  ]);
  expect(created[0]).toBe(created[1]);
  const suiteRunIds = [...new Set(created)];
  expect(suiteRunIds).toHaveLength(WORKSPACES * SUITES);
  expect(await db.suiteRun.count({ where: { workspaceId: first.workspace.id } })).toBe(SUITES);

  // Mid-load, the third worker dies with SIGKILL while it runs a test (after it has finished one),
  // and a fourth starts.
  const victim = present(workers[2], 'the third worker');
  const holding = await waitUntil(() => {
    const finished = runsLogged(victim, 'run finished');
    const started = runsLogged(victim, 'run started');
    const open = started.filter((id) => !finished.includes(id));
    return Promise.resolve(finished.length > 0 && open.length > 0 ? open : undefined);
  }, 50);
  victim.child.kill('SIGKILL');
  await victim.exited;
  workers.push(await startWorker());

  // Every suite ends with every run passed, each counted once.
  const total = WORKSPACES * SUITES * TESTS;
  await waitUntil(
    async () => (await db.run.count({ where: { suiteRunId: { in: suiteRunIds }, status: 'passed' } })) === total,
    250,
  );
  for (const id of suiteRunIds) {
    const row = await db.suiteRun.findUniqueOrThrow({ where: { id }, select: { workspaceId: true } });
    const tenant = present(
      tenants.find((t) => t.workspace.id === row.workspaceId),
      "the suite run's workspace",
    );
    const suiteRun = await apiClient(url0, tenant.key).getSuiteRun(id);
    expect(suiteRun.status).toBe('passed');
    await expectSuiteConsistent(db, suiteRun, TESTS);
  }

  // The work spread over all the workers; the runs the killed worker held were finished by others.
  const finishedBy = workers.map((w) => runsLogged(w, 'run finished'));
  for (const runs of finishedBy.slice(0, 3)) expect(runs.length).toBeGreaterThan(0);
  const elsewhere = finishedBy.filter((_, i) => i !== 2).flat();
  for (const id of holding) expect(elsewhere).toContain(id);
  const allRuns = await db.run.findMany({ where: { suiteRunId: { in: suiteRunIds } }, select: { id: true } });
  expect(allRuns.filter((r) => !finishedBy.flat().includes(r.id))).toEqual([]);

  for (const proc of [...workers.filter((w) => w !== victim), ...apis.map((a) => a.proc)]) {
    proc.child.kill('SIGTERM');
    await proc.exited;
  }
});
