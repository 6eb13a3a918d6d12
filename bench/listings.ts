/**
 * `pnpm bench listings`: how long a page of GET /api/v1/runs and /api/v1/suite-runs takes in a
 * workspace holding a million runs (BENCH_LISTINGS_RUNS), for each filter, on the built API over
 * HTTP. The runs are written by one INSERT … SELECT from generate_series (40,000 suite runs of 25
 * runs over 100 tests in 4 suites of 2 projects, 90 days of history, 2% failed and 0.5% error),
 * then ANALYZEd as autovacuum would. Rewrites the `listings` section of docs/BENCHMARKS.md.
 */
import { randomBytes } from 'node:crypto';
import { applyProject } from '../packages/admin/src/operations';
import { ID_PREFIX } from '@testrun/core/ids';
import { RunList, SuiteRunList, compileValidator } from '@testrun/contracts';
import { startBenchService } from './h2h/service';
import { jsonBody, machineLine, percentile, writeSection } from './report';

const RUNS = Number(process.env.BENCH_LISTINGS_RUNS ?? 1_000_000);
const PER_SUITE_RUN = 25;
const REQUESTS = Number(process.env.BENCH_LISTINGS_REQUESTS ?? 60);
const out = (line: string) => process.stdout.write(`${line}\n`);

const project = (slug: string) => ({
  slug,
  name: `Project ${slug}`,
  baseUrl: 'http://127.0.0.1:2',
  suites: ['checkout', 'search'].map((suite) => ({
    slug: suite,
    name: `Suite ${suite}`,
    tests: Array.from({ length: PER_SUITE_RUN }, (_, i) => ({
      key: `t${i + 1}`,
      name: `${suite} test ${i + 1}`,
      steps: [{ action: 'goto' as const, url: '/' }],
    })),
  })),
});

async function main(): Promise<void> {
  const bench = await startBenchService('listings', project('shop'));
  try {
    await applyProject(bench.db, bench.workspaceId, project('blog'));
    await measure(bench);
  } finally {
    await bench.close();
  }
}

async function measure(bench: Awaited<ReturnType<typeof startBenchService>>): Promise<void> {
  const { db, workspaceId, key, apiUrl } = bench;
  // Ids of this run's own, so a run that died half-way never collides with the next one.
  const tag = `b${randomBytes(3).toString('hex')}`;
  const began = performance.now();
  const suiteRuns = Math.ceil(RUNS / PER_SUITE_RUN);
  // Suite run i runs suite i mod 4, created i × (90 days / count) after the start of the history.
  await db.$executeRawUnsafe(
    `INSERT INTO suite_runs (id, workspace_id, suite_id, project_id, status, total_count, queued_count, running_count,
       passed_count, failed_count, error_count, created_at, started_at, finished_at)
     SELECT '${ID_PREFIX.suiteRun}${tag}' || lpad(i::text, 8, '0'), $1, su.id, su.project_id,
       (CASE WHEN i % 40 = 0 THEN 'failed' WHEN i % 200 = 1 THEN 'error' ELSE 'passed' END)::"RunStatus",
       ${PER_SUITE_RUN}, 0, 0, ${PER_SUITE_RUN}, 0, 0,
       now() - interval '90 days' + i * (interval '90 days' / $2::int),
       now() - interval '90 days' + i * (interval '90 days' / $2::int) + interval '50 ms',
       now() - interval '90 days' + i * (interval '90 days' / $2::int) + interval '40 s'
     FROM generate_series(0, $2::int - 1) i
     JOIN LATERAL (SELECT * FROM suites WHERE workspace_id = $1 ORDER BY project_id, slug OFFSET i % 4 LIMIT 1) su ON true`,
    workspaceId,
    suiteRuns,
  );
  await db.$executeRawUnsafe(
    `INSERT INTO runs (id, workspace_id, project_id, suite_id, test_id, suite_run_id, position, status, base_url,
       test_name, steps, timeout_ms, result_summary, outcome_code, created_at, started_at, finished_at, duration_ms, attempt)
     SELECT '${ID_PREFIX.run}${tag}' || lpad(sr.n::text, 8, '0') || lpad(t.position::text, 3, '0'), $1, sr.project_id,
       sr.suite_id, t.id, sr.id, t.position,
       (CASE WHEN sr.status = 'failed' AND t.position < 2 THEN 'failed'
             WHEN sr.status = 'error' AND t.position = 0 THEN 'error' ELSE 'passed' END)::"RunStatus",
       'http://127.0.0.1:2', t.name, '[]', 10000, 'Passed.',
       (CASE WHEN sr.status = 'failed' AND t.position < 2 THEN 'expectation_failed'
             WHEN sr.status = 'error' AND t.position = 0 THEN 'timeout' END)::"RunOutcomeCode",
       sr.created_at, sr.started_at, sr.finished_at, 1500, 1
     FROM (SELECT s.*, substr(s.id, length('${ID_PREFIX.suiteRun}${tag}') + 1)::int AS n FROM suite_runs s
           WHERE s.workspace_id = $1) sr
     JOIN tests t ON t.suite_id = sr.suite_id`,
    workspaceId,
  );
  await db.$executeRawUnsafe('ANALYZE runs');
  await db.$executeRawUnsafe('ANALYZE suite_runs');
  const seeded = await db.run.count({ where: { workspaceId } });
  const seedSeconds = (performance.now() - began) / 1000;
  out(`seeded ${seeded} runs in ${suiteRuns} suite runs in ${seedSeconds.toFixed(0)} s`);

  const test = await db.test.findFirstOrThrow({ where: { workspaceId, suite: { slug: 'search' } } });
  const oldSuiteRun = await db.suiteRun.findFirstOrThrow({ where: { workspaceId }, orderBy: { createdAt: 'asc' } });
  const weekAgo = new Date(Date.now() - 7 * 86_400_000).toISOString();
  const isRunList = compileValidator(RunList);
  const isSuiteRunList = compileValidator(SuiteRunList);
  const get = async (path: string) => {
    const res = await fetch(`${apiUrl}${path}`, { headers: { authorization: `Bearer ${key}` } });
    if (res.status !== 200) throw new Error(`${path} answered ${res.status}: ${await res.text()}`);
    return res;
  };
  // A cursor 200 pages deep (or the last page of a smaller history), to show a late page costs what the first does.
  let deep = '/api/v1/runs?limit=100';
  for (let i = 0; i < 200; i++) {
    const list = await jsonBody(await get(deep), isRunList);
    if (list.next_cursor === null) break;
    deep = `/api/v1/runs?limit=100&cursor=${list.next_cursor}`;
  }
  const cases: Array<[string, string, 'runs' | 'suite-runs']> = [
    ['runs, first page', '/api/v1/runs?limit=100', 'runs'],
    ['runs, page 201 (cursor)', deep, 'runs'],
    ['runs of a project', '/api/v1/runs?limit=100&projectSlug=blog', 'runs'],
    ['runs of a suite', '/api/v1/runs?limit=100&projectSlug=blog&suiteSlug=search', 'runs'],
    ['runs of a test', `/api/v1/runs?limit=100&testId=${test.id}`, 'runs'],
    ['runs of a suite run (oldest)', `/api/v1/runs?limit=100&suiteRunId=${oldSuiteRun.id}`, 'runs'],
    ['failed runs (2%)', '/api/v1/runs?limit=100&status=failed', 'runs'],
    ['failed or error runs', '/api/v1/runs?limit=100&status=failed,error', 'runs'],
    ['error runs of a test', `/api/v1/runs?limit=100&status=error&testId=${test.id}`, 'runs'],
    ['runs of the last week', `/api/v1/runs?limit=100&createdAfter=${weekAgo}`, 'runs'],
    ['runs before a week ago', `/api/v1/runs?limit=100&createdBefore=${weekAgo}`, 'runs'],
    ['suite runs, first page', '/api/v1/suite-runs?limit=100', 'suite-runs'],
    [
      'failed suite runs of a suite',
      '/api/v1/suite-runs?limit=100&projectSlug=shop&suiteSlug=checkout&status=failed',
      'suite-runs',
    ],
  ];
  const rows: string[] = [];
  for (const [name, path, kind] of cases) {
    const times: number[] = [];
    let items = 0;
    for (let i = 0; i < REQUESTS; i++) {
      const t0 = performance.now();
      const res = await get(path);
      const body =
        kind === 'runs' ? (await jsonBody(res, isRunList)).runs : (await jsonBody(res, isSuiteRunList)).suite_runs;
      times.push(performance.now() - t0);
      items = body.length;
    }
    const row = `| ${name} | ${items} | ${percentile(times, 50).toFixed(1)} | ${percentile(times, 99).toFixed(1)} |`;
    out(row);
    rows.push(row);
  }
  writeSection(
    'listings',
    `## Listings in a workspace of a million runs

\`pnpm bench listings\` (\`bench/listings.ts\`; \`BENCH_LISTINGS_RUNS\`, \`BENCH_LISTINGS_REQUESTS\`).

- ${machineLine()}; measured ${new Date().toISOString().slice(0, 10)} on a machine other processes shared.
- One workspace holds ${seeded.toLocaleString('en')} runs in ${suiteRuns.toLocaleString('en')} suite runs (2 projects, 4 suites,
  100 tests, 90 days of history, 2% of suite runs failed and 0.5% error), written in ${seedSeconds.toFixed(0)} s.
- Each case: ${REQUESTS} sequential GETs of one page of up to 100 items from the built API over HTTP (authentication,
  rate limit, the query, the JSON), timed by the client. Target: a page under 20 ms.

| Listing | Items on the page | p50 (ms) | p99 (ms) |
|---|---|---|---|
${rows.join('\n')}

Every filter is an equality on the leading column of an index that ends in \`(created_at, id)\`, so a page
reads about \`limit\` index entries, whichever page it is (the cursor is a \`(created_at, id)\` bound). Several
statuses are one ordered index scan each, merged.
`,
  );
  out('wrote the listings section of docs/BENCHMARKS.md');
}

/** Entry point of `pnpm bench listings`. */
export async function run(): Promise<void> {
  await main();
}
