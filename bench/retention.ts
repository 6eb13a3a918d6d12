/**
 * `pnpm bench retention`: how long the reconciler's purge takes to delete 100,000 expired runs
 * (BENCH_RETENTION_RUNS) with their steps, artifact rows and a share of files, and what it does to
 * POST /api/v1/runs meanwhile. The runs are written by INSERT … SELECT from generate_series, as the
 * listings bench does; the purge is the worker's own (purgeExpired, what each reconciler pass calls)
 * on the local artifact store. Windows of enqueueing with the purge at work alternate with windows
 * without it, so both latencies are measured under the same conditions. Rewrites the `retention`
 * section of docs/BENCHMARKS.md.
 */
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { artifactKey, LocalArtifactStore } from '@testrun/core/artifact-store';
import { createPrisma, type Db } from '@testrun/core/db';
import { ID_PREFIX } from '@testrun/core/ids';
import { purgeExpired, type RetentionReport } from '@testrun/worker';
import { startBenchService } from './h2h/service';
import { machineLine, percentile, writeSection } from './report';

const RUNS = Number(process.env.BENCH_RETENTION_RUNS ?? 100_000);
const PER_SUITE_RUN = 25;
/** Runs (of each suite run's first positions) that have a file in the store besides their rows. */
const FILE_SHARE = 0.1;
/** Length of each window of enqueueing, with the purge at work and without it. */
const WINDOW_MS = 2_000;
const out = (line: string) => process.stdout.write(`${line}\n`);

const project = {
  slug: 'retention',
  name: 'Retention',
  baseUrl: 'http://127.0.0.1:2',
  suites: [
    {
      slug: 'old',
      name: 'Old',
      tests: Array.from({ length: PER_SUITE_RUN }, (_, i) => ({
        key: `t${i + 1}`,
        name: `old test ${i + 1}`,
        steps: [{ action: 'goto' as const, url: '/' }],
      })),
    },
    {
      slug: 'post',
      name: 'Post',
      tests: [{ key: 'one', name: 'one', steps: [{ action: 'goto' as const, url: '/' }] }],
    },
  ],
};

type Bench = Awaited<ReturnType<typeof startBenchService>>;

/** 100,000 finished runs of 91 to 120 days ago, each with a step row and two artifact rows. */
async function seed(
  bench: Bench,
  store: LocalArtifactStore,
): Promise<{ runs: number; files: number; seconds: number }> {
  const { db, workspaceId } = bench;
  const tag = `b${randomBytes(3).toString('hex')}`;
  const began = performance.now();
  const suiteRuns = Math.ceil(RUNS / PER_SUITE_RUN);
  await db.$executeRawUnsafe(
    `INSERT INTO suite_runs (id, workspace_id, suite_id, project_id, status, total_count, queued_count, running_count,
       passed_count, created_at, started_at, finished_at)
     SELECT '${ID_PREFIX.suiteRun}${tag}' || lpad(i::text, 8, '0'), $1, su.id, su.project_id, 'passed',
       ${PER_SUITE_RUN}, 0, 0, ${PER_SUITE_RUN},
       now() - interval '120 days' + i * (interval '29 days' / $2::int),
       now() - interval '120 days' + i * (interval '29 days' / $2::int) + interval '50 ms',
       now() - interval '120 days' + i * (interval '29 days' / $2::int) + interval '40 s'
     FROM generate_series(0, $2::int - 1) i
     JOIN suites su ON su.workspace_id = $1 AND su.slug = 'old'`,
    workspaceId,
    suiteRuns,
  );
  await db.$executeRawUnsafe(
    `INSERT INTO runs (id, workspace_id, project_id, suite_id, test_id, suite_run_id, position, status, base_url,
       test_name, steps, timeout_ms, result_summary, created_at, started_at, finished_at, duration_ms, attempt)
     SELECT '${ID_PREFIX.run}${tag}' || substr(sr.id, length('${ID_PREFIX.suiteRun}${tag}') + 1) || lpad(t.position::text, 3, '0'),
       $1, sr.project_id, sr.suite_id, t.id, sr.id, t.position, 'passed', 'http://127.0.0.1:2', t.name, '[]', 10000,
       'Passed.', sr.created_at, sr.started_at, sr.finished_at, 1500, 1
     FROM suite_runs sr JOIN tests t ON t.suite_id = sr.suite_id
     WHERE sr.workspace_id = $1 AND sr.id LIKE '${ID_PREFIX.suiteRun}${tag}%'`,
    workspaceId,
  );
  const runFilter = `r.workspace_id = $1 AND r.id LIKE '${ID_PREFIX.run}${tag}%'`;
  await db.$executeRawUnsafe(
    `INSERT INTO step_results (id, run_id, attempt, index, action, label, target, outcome, started_at, duration_ms, screenshot_id)
     SELECT '${ID_PREFIX.step}' || substr(r.id, 4), r.id, 1, 1, 'goto', 'goto "/"', '/', 'passed', r.started_at, 900,
       '${ID_PREFIX.artifact}s' || substr(r.id, 4)
     FROM runs r WHERE ${runFilter}`,
    workspaceId,
  );
  // A screenshot and a trace row per run, keyed as the worker keys them (artifactKey).
  await db.$executeRawUnsafe(
    `INSERT INTO artifacts (id, run_id, workspace_id, attempt, kind, step_index, name, storage_key, content_type,
       size_bytes, created_at)
     SELECT a.id, r.id, r.workspace_id, 1, a.kind::"ArtifactKind", a.step, a.name,
       r.workspace_id || '/' || r.id || '/' || a.id || '-' || a.name, a.type, 2048, r.finished_at
     FROM runs r
     CROSS JOIN LATERAL (VALUES
       ('${ID_PREFIX.artifact}s' || substr(r.id, 4), 'screenshot', 1, 'step-1.png', 'image/png'),
       ('${ID_PREFIX.artifact}t' || substr(r.id, 4), 'trace', NULL, 'trace.zip', 'application/zip')
     ) AS a(id, kind, step, name, type)
     WHERE ${runFilter}`,
    workspaceId,
  );
  const withFiles = await db.$queryRawUnsafe<Array<{ id: string; run_id: string; name: string }>>(
    `SELECT a.id, a.run_id, a.name FROM artifacts a JOIN runs r ON r.id = a.run_id
     WHERE ${runFilter} AND r.position < $2 AND a.kind = 'screenshot'`,
    workspaceId,
    Math.round(PER_SUITE_RUN * FILE_SHARE),
  );
  const body = randomBytes(2048);
  for (let i = 0; i < withFiles.length; i += 64)
    await Promise.all(
      withFiles.slice(i, i + 64).map((a) => store.put(artifactKey(workspaceId, a.run_id, a.id, a.name), body)),
    );
  for (const table of ['runs', 'suite_runs', 'step_results', 'artifacts'])
    await db.$executeRawUnsafe(`ANALYZE ${table}`);
  const runs = await db.run.count({ where: { workspaceId, id: { startsWith: `${ID_PREFIX.run}${tag}` } } });
  return { runs, files: withFiles.length, seconds: (performance.now() - began) / 1000 };
}

/** POSTs one-test run requests one after another until `until` resolves; each answer's time in ms. */
async function enqueueUntil(bench: Bench, until: Promise<unknown>): Promise<number[]> {
  const window = { over: false };
  void until.finally(() => (window.over = true));
  const times: number[] = [];
  while (!window.over) {
    const t0 = performance.now();
    await bench.post({ projectSlug: 'retention', suiteSlug: 'post' });
    times.push(performance.now() - t0);
  }
  return times;
}

async function measure(bench: Bench): Promise<void> {
  // No worker runs here: the runs posted stay queued, so lift the workspace's active limit.
  await bench.db.workspace.update({ where: { id: bench.workspaceId }, data: { maxActiveRuns: 1_000_000 } });
  const dir = mkdtempSync(path.join(tmpdir(), 'testrun-retention-bench-'));
  const store = new LocalArtifactStore(dir);
  // The pool of a worker of concurrency 2 (worker-service.ts).
  const purgeDb: Db = createPrisma({ databaseUrl: bench.databaseUrl, max: 6 });
  try {
    const seeded = await seed(bench, store);
    out(`seeded ${seeded.runs} runs (${seeded.files} with a file) in ${seeded.seconds.toFixed(0)} s`);
    const idle: number[] = [];
    const purging: number[] = [];
    const total: RetentionReport = {
      runs: 0,
      suiteRuns: 0,
      artifactRuns: 0,
      historyEntries: 0,
      images: 0,
      done: false,
    };
    let purgeMs = 0;
    let calls = 0;
    const wallBegan = performance.now();
    while (!total.done) {
      idle.push(...(await enqueueUntil(bench, new Promise((resolve) => setTimeout(resolve, WINDOW_MS)))));
      const t0 = performance.now();
      const pass = purgeExpired({
        db: purgeDb,
        store,
        defaults: { artifactDays: 30, runDays: 90 },
        budgetMs: WINDOW_MS,
      });
      purging.push(...(await enqueueUntil(bench, pass)));
      const report = await pass;
      purgeMs += performance.now() - t0;
      calls += 1;
      total.runs += report.runs;
      total.suiteRuns += report.suiteRuns;
      total.artifactRuns += report.artifactRuns;
      total.done = report.done;
      out(`purge call ${calls}: ${report.runs} runs, ${report.suiteRuns} suite runs (${total.runs} in all)`);
    }
    const wallSeconds = (performance.now() - wallBegan) / 1000;
    const left = await bench.db.run.count({
      where: { workspaceId: bench.workspaceId, createdAt: { lt: new Date(Date.now() - 90 * 86_400_000) } },
    });
    if (left !== 0) throw new Error(`${left} expired runs were left`);
    const line = (name: string, times: number[]) =>
      `| ${name} | ${times.length} | ${percentile(times, 50).toFixed(1)} | ${percentile(times, 99).toFixed(1)} | ${Math.max(...times).toFixed(1)} |`;
    const rows = [line('idle (no purge)', idle), line('while purging', purging)];
    for (const row of rows) out(row);
    const seconds = purgeMs / 1000;
    writeSection(
      'retention',
      `## Retention: purging 100,000 expired runs

\`pnpm bench retention\` (\`bench/retention.ts\`; \`BENCH_RETENTION_RUNS\`).

- ${machineLine()}; measured ${new Date().toISOString().slice(0, 10)} on a machine other processes shared.
- Seeded: ${seeded.runs.toLocaleString('en')} finished runs of 91 to 120 days ago in ${Math.ceil(RUNS / PER_SUITE_RUN).toLocaleString('en')} suite runs, each run with a
  step row and two artifact rows (${(seeded.runs * 2).toLocaleString('en')} in all); ${seeded.files.toLocaleString('en')} of the runs also have a file in the local
  artifact store. Defaults: \`RUN_RETENTION_DAYS=90\`, \`ARTIFACT_RETENTION_DAYS=30\`.
- The purge is the worker's own (\`purgeExpired\`, which every reconciler pass calls), batches of 500 runs.

**Purge: ${total.runs.toLocaleString('en')} runs, ${total.suiteRuns.toLocaleString('en')} suite runs, their steps, artifact rows and files in ${seconds.toFixed(1)} s
of purging (${Math.round(total.runs / seconds).toLocaleString('en')} runs/s)**, in ${calls} calls of at most ${WINDOW_MS / 1000} s each.
In the worker each reconciler pass purges for at most 5 s and passes are \`RECONCILE_INTERVAL_MS\` (5 s) apart,
so a backlog like this one is cleared in about twice that time; a daily trickle takes a fraction of one pass.

POST /api/v1/runs (one-test suite request, sequential, timed by the client) in ${WINDOW_MS / 1000} s windows that
alternate between the purge at work and no purge (${wallSeconds.toFixed(0)} s in all):

| Windows | POSTs | p50 (ms) | p99 (ms) | max (ms) |
|---|---|---|---|---|
${rows.join('\n')}

Enqueueing never waits on the purge: a batch deletes rows that no request reads or locks (runs
months old, found through the \`(workspace_id, created_at)\` indexes), in statements of 500 runs and
transactions of two statements; creating a run takes no lock a purge holds. What the purge costs a
POST is the CPU and disk it shares with it on this machine.
`,
    );
    out('wrote the retention section of docs/BENCHMARKS.md');
  } finally {
    await purgeDb.$disconnect();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Entry point of `pnpm bench retention`. */
export async function run(): Promise<void> {
  const bench = await startBenchService('retention', project);
  try {
    await measure(bench);
  } finally {
    await bench.close();
  }
}
