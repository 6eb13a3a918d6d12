/**
 * `pnpm bench api`: the API's read throughput against a bare Express 5 app in the same run, and the
 * time of enqueueing large suites and projects; rewrites the `api` section of docs/BENCHMARKS.md.
 * The built API runs as its own process (plain node on dist, as production), on a database and Redis
 * prefix of the bench's own; no worker runs, so the runs it creates stay queued.
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import autocannon from 'autocannon';
import { Redis } from 'ioredis';
import { addMember, applyProject, createApiKey, createWorkspace } from '../packages/admin/src/operations';
import { createPrisma, type Db } from '@testrun/core/db';
import { readCommonConfig } from '@testrun/core/env';
import { ensureDatabase, migrateDatabase } from '@testrun/core/migrate';
import type { ProjectFile } from '@testrun/contracts';
import { freePort, spawnService, testTargetAllow } from '../test/support/processes';
import { machineLine, percentile, spread, writeSection } from './report';

const ROUNDS = Number(process.env.BENCH_API_ROUNDS ?? 3);
const SECONDS = Number(process.env.BENCH_API_SECONDS ?? 5);
const CONNECTIONS = 50;
const ENQUEUE_TRIES = Number(process.env.BENCH_API_ENQUEUE_TRIES ?? 5);

const out = (line: string) => process.stdout.write(`${line}\n`);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function suites(count: number, testsEach: number, prefix: string): ProjectFile['suites'] {
  return Array.from({ length: count }, (_, s) => ({
    slug: `${prefix}-${s}`,
    name: `${prefix} ${s}`,
    tests: Array.from({ length: testsEach }, (_, t) => ({
      key: `t${t}`,
      name: `Test ${t}`,
      steps: [{ action: 'goto' as const, url: `/p/${t}` }],
    })),
  }));
}

interface Load {
  rps: number;
  p99: number;
}

async function load(url: string, headers: Record<string, string>): Promise<Load> {
  const result = await autocannon({ url, connections: CONNECTIONS, duration: SECONDS, headers });
  if (result.non2xx > 0 || result.errors > 0)
    throw new Error(`${url}: ${result.non2xx} answers were not 2xx and ${result.errors} failed`);
  return { rps: result.requests.average, p99: result.latency.p99 };
}

async function startHello(): Promise<{ url: string; stop: () => void }> {
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(__dirname, 'api-hello.ts')], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const port = await new Promise<string>((resolve) =>
    child.stdout.once('data', (chunk: Buffer) => resolve(chunk.toString().trim())),
  );
  return { url: `http://127.0.0.1:${port}/hello`, stop: () => child.kill('SIGTERM') };
}

async function tenant(db: Db, tag: string) {
  const workspace = await createWorkspace(db, { name: tag, plan: 'enterprise' });
  // The plan's limits are the workspace's own; the bench creates far more runs than a month's worth.
  await db.workspace.update({
    where: { id: workspace.id },
    data: { maxActiveRuns: 1_000_000, monthlyRuns: 100_000_000 },
  });
  const email = `${tag}@testrun.local`;
  await addMember(db, workspace.id, email);
  const { key } = await createApiKey(db, { workspaceId: workspace.id, creatorEmail: email, name: tag });
  return { workspace, key };
}

export async function run(): Promise<void> {
  const common = readCommonConfig(process.env);
  const dbUrl = new URL(common.databaseUrl);
  dbUrl.pathname = '/testrun_bench_api';
  const databaseUrl = dbUrl.toString();
  await ensureDatabase(databaseUrl);
  await migrateDatabase(databaseUrl);
  const db = createPrisma({ databaseUrl, max: 2 });
  const prefix = `testrun-bench-api-${randomBytes(3).toString('hex')}`;
  const a = await tenant(db, `api-a-${prefix}`);
  const b = await tenant(db, `api-b-${prefix}`);
  await applyProject(db, a.workspace.id, {
    slug: 'api',
    name: 'API bench',
    baseUrl: 'http://127.0.0.1:2',
    suites: [...suites(1, 100, 'hundred'), ...suites(1, 1_000, 'thousand')],
  });
  // 1b. Deploying the 5,000-test project (validate, store the version, activate): new, then again
  // with one test changed (every row there already).
  const bigFile: ProjectFile = {
    slug: 'big',
    name: 'Five thousand',
    baseUrl: 'http://127.0.0.1:2',
    suites: suites(5, 1_000, 'part'),
  };
  const deployMs: number[] = [];
  for (const name of ['Test 0', 'Test 0 again']) {
    const first = bigFile.suites[0]?.tests[0];
    if (first) first.name = name;
    const began = performance.now();
    await applyProject(db, a.workspace.id, bigFile);
    deployMs.push(performance.now() - began);
  }
  out(`deploying 5,000 tests: ${deployMs.map((ms) => ms.toFixed(0)).join(' ms, then ')} ms`);
  await applyProject(db, b.workspace.id, {
    slug: 'other',
    name: 'Other',
    baseUrl: 'http://127.0.0.1:2',
    suites: suites(1, 1, 'one'),
  });

  const port = await freePort();
  const api = spawnService('api', {
    DATABASE_URL: databaseUrl,
    REDIS_PREFIX: prefix,
    LOG_LEVEL: 'warn',
    RATE_LIMIT_PER_MINUTE: '1000000',
    TARGET_ALLOW: testTargetAllow(),
    PORT: String(port),
  });
  const base = `http://127.0.0.1:${port}`;
  for (
    let i = 0;
    !(await fetch(`${base}/readyz`).then(
      (r) => r.ok,
      () => false,
    ));
    i++
  ) {
    if (i > 200) throw new Error(`the API did not become ready:\n${api.output()}`);
    await sleep(100);
  }
  const post = async (key: string, body: unknown): Promise<{ status: number; ms: number; body: unknown }> => {
    const began = performance.now();
    const res = await fetch(`${base}/api/v1/runs`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, ms: performance.now() - began, body: JSON.parse(text) as unknown };
  };
  const single = await post(a.key, { projectSlug: 'api', suiteSlug: 'hundred-0' });
  if (single.status !== 201) throw new Error(`POST answered ${single.status}: ${JSON.stringify(single.body)}`);
  const suiteRunId = (single.body as { suiteRunId: string }).suiteRunId;
  const oneRun = await db.run.findFirstOrThrow({ where: { suiteRunId }, select: { id: true } });
  const auth = { authorization: `Bearer ${a.key}` };

  // 1. Read throughput, alternating with the hello-world in every round.
  const hello = await startHello();
  const reads: Record<'hello' | 'run' | 'suite', Load[]> = { hello: [], run: [], suite: [] };
  for (let round = 0; round < ROUNDS; round++) {
    const order = round % 2 === 0 ? (['hello', 'run', 'suite'] as const) : (['suite', 'run', 'hello'] as const);
    for (const what of order) {
      const url =
        what === 'hello'
          ? hello.url
          : what === 'run'
            ? `${base}/api/v1/runs/${oneRun.id}`
            : `${base}/api/v1/suite-runs/${suiteRunId}`;
      const result = await load(url, what === 'hello' ? {} : auth);
      reads[what].push(result);
      out(`round ${round + 1} ${what}: ${result.rps.toFixed(0)} req/s, p99 ${result.p99} ms`);
    }
  }
  hello.stop();

  // 2. Enqueue: large suites and a large project, each POST timed from send to answer.
  const enqueue: Record<string, { ms: number[]; status: number; runs: number }> = {};
  const timePosts = async (name: string, body: unknown, runs: number) => {
    const ms: number[] = [];
    let status = 0;
    for (let i = 0; i < ENQUEUE_TRIES; i++) {
      const answer = await post(a.key, body);
      status = answer.status;
      if (answer.status !== 201) {
        out(`${name}: answered ${answer.status} ${JSON.stringify(answer.body)}`);
        break;
      }
      ms.push(answer.ms);
    }
    enqueue[name] = { ms, status, runs };
    if (ms.length) out(`${name}: ${spread(ms).median.toFixed(0)} ms median`);
  };
  await timePosts('suite of 100', { projectSlug: 'api', suiteSlug: 'hundred-0' }, 100);
  await timePosts('suite of 1,000', { projectSlug: 'api', suiteSlug: 'thousand-0' }, 1_000);
  await timePosts('project of 5,000', { projectSlug: 'big' }, 5_000);

  // 3. Another workspace's requests while a 1,000-test suite is being enqueued.
  const otherMs: number[] = [];
  const enqueuing = { done: false };
  const big = (async () => {
    for (let i = 0; i < 3; i++) await post(a.key, { projectSlug: 'api', suiteSlug: 'thousand-0' });
    enqueuing.done = true;
  })();
  while (!enqueuing.done) {
    const answer = await post(b.key, { projectSlug: 'other', suiteSlug: 'one-0' });
    if (answer.status !== 201) throw new Error(`workspace B's POST answered ${answer.status}`);
    otherMs.push(answer.ms);
  }
  await big;
  const aloneMs: number[] = [];
  for (let i = 0; i < 30; i++) aloneMs.push((await post(b.key, { projectSlug: 'other', suiteSlug: 'one-0' })).ms);

  api.child.kill('SIGTERM');
  await api.exited;
  for (const t of [a, b]) await db.workspace.delete({ where: { id: t.workspace.id } });
  await db.$disconnect();
  const redis = new Redis(common.redisUrl);
  const keys = await redis.keys(`${prefix}*`);
  if (keys.length) await redis.del(...keys);
  redis.disconnect();

  const ratio = (what: 'run' | 'suite') => spread(reads[what].map((r, i) => r.rps / (reads.hello[i]?.rps ?? NaN)));
  const fmtSpread = (s: { median: number; min: number; max: number }, digits: number, unit = '') =>
    `${s.median.toFixed(digits)}${unit} (${s.min.toFixed(digits)}–${s.max.toFixed(digits)})`;
  const readRow = (label: string, what: 'hello' | 'run' | 'suite', target: string) => {
    const rps = spread(reads[what].map((r) => r.rps));
    const p99 = spread(reads[what].map((r) => r.p99));
    const share = what === 'hello' ? '1' : fmtSpread(ratio(what), 2);
    return `| ${label} | ${fmtSpread(rps, 0)} | ${fmtSpread(p99, 0, ' ms')} | ${share} | ${target} |`;
  };
  const enqueueRows = Object.entries(enqueue).map(([name, e]) => {
    if (e.ms.length === 0) return `| ${name} | answered ${e.status} | | |`;
    const s = spread(e.ms);
    return `| ${name} | ${fmtSpread(s, 0, ' ms')} | ${((s.median / e.runs) * 1000).toFixed(0)} µs | ${
      name.includes('1,000') ? '≤ 150 ms' : name.includes('5,000') ? '≤ 600 ms' : ''
    } |`;
  });
  const doc = `## API: reads and enqueueing

\`pnpm bench api\` (\`bench/api.ts\`; \`BENCH_API_ROUNDS\`, \`BENCH_API_SECONDS\`, \`BENCH_API_ENQUEUE_TRIES\`).

- ${machineLine()}; measured ${new Date().toISOString().slice(0, 10)} on a machine other processes shared.
- The built API as its own process (rate limiting on, its Redis round trip included, with a limit no
  run reaches), Postgres and Redis on the same machine; autocannon in the bench process, ${CONNECTIONS}
  connections, ${SECONDS} s per measurement; a bare Express 5 app answering \`{"hello":"world"}\`
  (\`bench/api-hello.ts\`) measured in the same rounds, alternating order. Figures: median (min–max) of ${ROUNDS} rounds.

| Read | req/s | p99 | share of hello-world | Target |
|---|---|---|---|---|
${readRow('hello-world (Express 5)', 'hello', '')}
${readRow('GET /api/v1/runs/{id}', 'run', '≥ 30 %, p99 ≤ 50 ms')}
${readRow('GET /api/v1/suite-runs/{id} (100 children)', 'suite', '≥ 15 %')}

| Enqueue (POST /api/v1/runs, ${ENQUEUE_TRIES} tries) | time | per run | Target |
|---|---|---|---|
${enqueueRows.join('\n')}

Deploying a project of 5,000 tests in 5 suites (\`project apply\` in the bench process: validate the file,
store the version and its tests, activate it): ${deployMs[0]?.toFixed(0)} ms new, ${deployMs[1]?.toFixed(0)} ms
again with one test changed.

Another workspace's one-test POST while 1,000-test suites are being enqueued: p50
${percentile(otherMs, 50).toFixed(0)} ms, p99 ${percentile(otherMs, 99).toFixed(0)} ms over ${otherMs.length} requests
(alone: p50 ${percentile(aloneMs, 50).toFixed(0)} ms, p99 ${percentile(aloneMs, 99).toFixed(0)} ms).
`;
  writeSection('api', doc);
  out('wrote the api section of docs/BENCHMARKS.md');
}
