/**
 * `pnpm bench cancel`: how fast a cancel lands. Each round enqueues a suite of slow tests, waits
 * until the worker runs two of them (the rest queued), cancels the suite run over HTTP and times
 * (a) the request to every child terminal and (b) the request to the worker having closed the
 * running runs' browser contexts. Rewrites the `cancel` section of docs/BENCHMARKS.md. Uses
 * DATABASE_URL with a workspace of its own (deleted afterwards) and a Redis prefix of its own.
 */
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { compileValidator, SuiteRunCreated } from '@testrun/contracts';
import { addMember, applyProject, createApiKey, createWorkspace } from '../packages/admin/src/operations';
import { createPrisma } from '@testrun/core/db';
import { readCommonConfig } from '@testrun/core/env';
import { createLogger } from '@testrun/core/logger';
import { ensureDatabase, migrateDatabase } from '@testrun/core/migrate';
import { readWorkerConfig, startWorkerService } from '@testrun/worker';
import { startFixtureSite } from '../test/fixtures/site';
import { startApi } from '../test/e2e/support';
import { jsonBody, machineLine, percentile, writeSection } from './report';
import { testTargetAllow } from '../test/support/processes';

const ROUNDS = Number(process.env.BENCH_CANCEL_ROUNDS ?? 12);
/** Children per suite run: two run (the worker's concurrency), the others wait in the queue. */
const CHILDREN = 5;

const isSuiteRunCreated = compileValidator(SuiteRunCreated);
const out = (line: string) => process.stdout.write(`${line}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export async function run(): Promise<void> {
  const prefix = `${process.env.REDIS_PREFIX ?? 'testrun'}-bench-cancel-${randomBytes(3).toString('hex')}`;
  const env = {
    ...process.env,
    REDIS_PREFIX: prefix,
    LOG_LEVEL: 'error',
    RATE_LIMIT_PER_MINUTE: '100000',
    TARGET_ALLOW: process.env.TARGET_ALLOW ?? testTargetAllow(),
  };
  const common = readCommonConfig(env);
  await ensureDatabase(common.databaseUrl);
  await migrateDatabase(common.databaseUrl);
  const db = createPrisma({ databaseUrl: common.databaseUrl, max: 4 });
  const site = await startFixtureSite();
  const workspace = await createWorkspace(db, { name: 'bench-cancel', plan: 'enterprise' });
  const email = `bench-${prefix}@testrun.local`;
  await addMember(db, workspace.id, email);
  const { key } = await createApiKey(db, { workspaceId: workspace.id, creatorEmail: email, name: 'bench' });
  await applyProject(db, workspace.id, {
    slug: 'bench',
    name: 'Bench',
    baseUrl: site.url,
    suites: [
      {
        slug: 'slow',
        name: 'Slow',
        tests: Array.from({ length: CHILDREN }, (_, i) => ({
          key: `slow-${i + 1}`,
          name: `Slow ${i + 1}`,
          timeoutMs: 120_000,
          steps: [
            { action: 'goto' as const, url: '/' },
            { action: 'wait' as const, ms: 30_000 },
          ],
        })),
      },
    ],
  });

  Object.assign(process.env, { REDIS_PREFIX: prefix, RATE_LIMIT_PER_MINUTE: '100000', TARGET_ALLOW: env.TARGET_ALLOW });
  const api = await startApi({ REDIS_PREFIX: prefix });
  const closedAt = new Map<string, number>();
  const service = await startWorkerService(readWorkerConfig({ ...env, WORKER_CONCURRENCY: '2' }), {
    logger: createLogger({ service: 'bench-worker', level: 'error' }),
    reconcile: false,
    onContextCancelled: (runId) => closedAt.set(runId, performance.now()),
  });
  const post = (path: string, body?: unknown) =>
    fetch(`${api.url}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });

  const toTerminalMs: number[] = [];
  const toClosedMs: number[] = [];
  const answerMs: number[] = [];
  for (let round = 0; round < ROUNDS; round++) {
    const { suiteRunId } = await jsonBody(
      await post('/api/v1/runs', { projectSlug: 'bench', suiteSlug: 'slow' }),
      isSuiteRunCreated,
    );
    // Two children running and inside their `wait` step (the first step's page is loaded).
    let running: string[];
    for (;;) {
      const rows = await db.run.findMany({ where: { suiteRunId }, select: { id: true, status: true } });
      running = rows.filter((r) => r.status === 'running').map((r) => r.id);
      const stepsDone = await db.stepResult.count({ where: { runId: { in: running } } });
      if (running.length === 2 && stepsDone >= 2) break;
      await sleep(20);
    }
    const sent = performance.now();
    const res = await post(`/api/v1/suite-runs/${suiteRunId}/cancel`);
    answerMs.push(performance.now() - sent);
    if (res.status !== 202) throw new Error(`cancel answered ${res.status}`);
    for (;;) {
      const open = await db.run.count({ where: { suiteRunId, status: { in: ['queued', 'running'] } } });
      if (open === 0) break;
      await sleep(5);
    }
    toTerminalMs.push(performance.now() - sent);
    for (const id of running) {
      const at = closedAt.get(id);
      if (at === undefined) throw new Error(`the worker did not report closing the context of ${id}`);
      toClosedMs.push(at - sent);
    }
  }

  await service.stop();
  await api.close();
  await site.close();
  await db.workspace.delete({ where: { id: workspace.id } });
  await db.$disconnect();
  const redis = new Redis(common.redisUrl);
  const keys = await redis.keys(`${prefix}*`);
  if (keys.length) await redis.del(...keys);
  redis.disconnect();

  const line = (values: number[]) =>
    `p50 ${percentile(values, 50).toFixed(0)} ms, p95 ${percentile(values, 95).toFixed(0)} ms, max ${Math.max(...values).toFixed(0)} ms`;
  out(`cancel request → every child terminal: ${line(toTerminalMs)}`);
  out(`cancel request → worker closed the context: ${line(toClosedMs)}`);
  out(`cancel request → 202 answer: ${line(answerMs)}`);

  writeSection(
    'cancel',
    `## Cancel latency

\`pnpm bench cancel\` (\`bench/cancel.ts\`; \`BENCH_CANCEL_ROUNDS\`, default 12).

### Machine

- ${machineLine()}
- Postgres and Redis on the same machine (127.0.0.1)
- Measured ${new Date().toISOString().slice(0, 10)}, while other processes shared the machine: figures are indicative.

### Method

One process holds the API (real HTTP on 127.0.0.1) and one worker (WORKER_CONCURRENCY=2, one warm
Chromium, reconciler off, so every stop measured is the worker's own, told through Redis pub/sub).
Each of ${ROUNDS} rounds enqueues a suite of ${CHILDREN} tests that each load \`/\` then wait 30 s,
waits until two children run and are inside their wait (three stay queued), then sends
\`POST /api/v1/suite-runs/{id}/cancel\` and measures, from the moment the request is sent:

- **every child terminal**: until no child is queued or running in Postgres (the queued ones end
  \`skipped\`/\`cancelled\` in the request's transaction; the running ones \`error\`/\`cancelled\` by
  their worker's terminal write);
- **context closed**: until the worker's \`BrowserContext.close()\` of a running child resolved
  (reported by the worker service's \`onContextCancelled\`), one figure per running child.

### Results

| From the cancel request to | p50 | p95 | max |
|---|---|---|---|
| the 202 answer | ${percentile(answerMs, 50).toFixed(0)} ms | ${percentile(answerMs, 95).toFixed(0)} ms | ${Math.max(...answerMs).toFixed(0)} ms |
| the worker closed the context (${toClosedMs.length} runs) | ${percentile(toClosedMs, 50).toFixed(0)} ms | ${percentile(toClosedMs, 95).toFixed(0)} ms | ${Math.max(...toClosedMs).toFixed(0)} ms |
| every child terminal (${toTerminalMs.length} suite runs) | ${percentile(toTerminalMs, 50).toFixed(0)} ms | ${percentile(toTerminalMs, 95).toFixed(0)} ms | ${Math.max(...toTerminalMs).toFixed(0)} ms |

The target is 2 s from the request to every child terminal. When the worker misses the message
(Redis down at that moment), the reconciler ends the run after \`cancelGraceMs\` (5 s) plus up to
one reconcile interval (5 s).
`,
  );
}
