/**
 * `pnpm bench view-history`: what a test's history costs the detailed view. A 1,000-test suite run
 * (20 failed, 10 error: 30 tests open) after 25 earlier suite runs of the same suite, in a freshly
 * migrated database: the history load of the 30 open tests, one run's (a run page, a fragment), the
 * statement's own time in Postgres, and the GET of the suite page through the view router, beside
 * the GET of the first suite run's page (the same 30 open tests, each history one mark long).
 *
 * Postgres from DATABASE_URL (default local). Rewrites its section of docs/VIEW.md.
 */
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { applyProject, createWorkspace } from '../packages/admin/src/operations';
import { createPrisma, type Db } from '@testrun/core/db';
import { DEFAULT_DATABASE_URL } from '@testrun/core/env';
import { ID_PREFIX, newId } from '@testrun/core/ids';
import { dropDatabase, ensureDatabase, migrateDatabase } from '@testrun/core/migrate';
import { signViewLink } from '@testrun/core/view-links';
import type { TerminalRunStatus } from '@testrun/contracts';
import { attachHistory, historySql, readHistory } from '../apps/api/src/view/data/history';
import type { ViewRun } from '../apps/api/src/view/model';
import { first, machineLine, writeSection } from './report';
import { BENCH_KEYS, outcomeAt, serveView, stats } from './view-common';

const TESTS = 1000;
const EARLIER = 25;
const HOUR = 3_600_000;

/** The outcome of test `i` in every suite run: `pnpm bench view`'s, with its disabled tests passing. */
function outcome(i: number): Exclude<TerminalRunStatus, 'skipped'> {
  const o = outcomeAt(i);
  return o === 'skipped' ? 'passed' : o;
}

async function seed(db: Db) {
  const ws = await createWorkspace(db, { name: 'bench', plan: 'enterprise' });
  const applied = await applyProject(db, ws.id, {
    slug: 'shop',
    name: 'Shop',
    baseUrl: 'http://127.0.0.1:4010',
    suites: [
      {
        slug: 'checkout',
        name: 'Checkout',
        tests: Array.from({ length: TESTS }, (_, i) => ({
          key: `t${i}`,
          name: `Checkout test number ${i}`,
          steps: [{ action: 'goto' as const, url: '/' }],
        })),
      },
    ],
  });
  const suite = first(applied.suites, 'suite');
  const tests = await db.test.findMany({ where: { suiteId: suite.id }, orderBy: { position: 'asc' } });
  const suiteRuns: Array<{ id: string; open: string[] }> = [];
  const now = Date.now();
  for (let k = 0; k <= EARLIER; k++) {
    const id = newId(ID_PREFIX.suiteRun);
    const at = new Date(now - (EARLIER + 1 - k) * HOUR);
    const runs = tests.map((t, i) => ({ id: newId(ID_PREFIX.run), t, i, status: outcome(i) }));
    const count = (s: TerminalRunStatus) => runs.filter((r) => r.status === s).length;
    await db.suiteRun.create({
      data: {
        id,
        workspaceId: ws.id,
        suiteId: suite.id,
        projectId: applied.projectId,
        status: 'failed',
        totalCount: TESTS,
        queuedCount: 0,
        runningCount: 0,
        passedCount: count('passed'),
        failedCount: count('failed'),
        errorCount: count('error'),
        createdAt: at,
        startedAt: at,
        finishedAt: at,
      },
    });
    await db.run.createMany({
      data: runs.map(({ id: runId, t, i, status }) => ({
        id: runId,
        workspaceId: ws.id,
        projectId: t.projectId,
        suiteId: t.suiteId,
        testId: t.id,
        suiteRunId: id,
        position: i,
        status,
        attempt: 1,
        baseUrl: 'http://127.0.0.1:4010',
        testName: t.name,
        steps: t.steps as object,
        timeoutMs: t.timeoutMs,
        resultSummary: status === 'passed' ? 'Passed: 1 step.' : 'Failed at step 1 (goto "/"): HTTP 500',
        outcomeCode: status === 'failed' ? 'http_error' : status === 'error' ? 'timeout' : null,
        outcomeStep: status === 'passed' ? null : 1,
        createdAt: at,
        startedAt: at,
        finishedAt: at,
        durationMs: 900,
      })),
    });
    suiteRuns.push({ id, open: runs.filter((r) => r.status !== 'passed').map((r) => r.id) });
  }
  await db.$executeRawUnsafe('ANALYZE runs');
  return { suiteRuns, runCount: (EARLIER + 1) * TESTS };
}

async function sample(n: number, warmup: number, fn: () => Promise<unknown>): Promise<number[]> {
  const samples: number[] = [];
  for (let i = 0; i < n + warmup; i++) {
    const t = process.hrtime.bigint();
    await fn();
    if (i >= warmup) samples.push(Number(process.hrtime.bigint() - t) / 1e6);
  }
  return samples;
}

export async function run(): Promise<void> {
  const base = new URL(process.env.DATABASE_URL || DEFAULT_DATABASE_URL);
  base.pathname = `/testrun_bench_${randomBytes(4).toString('hex')}`;
  const databaseUrl = base.toString();
  await ensureDatabase(databaseUrl);
  const db = createPrisma({ databaseUrl, max: 4 });
  try {
    await migrateDatabase(databaseUrl);
    const { suiteRuns, runCount } = await seed(db);
    const current = suiteRuns[suiteRuns.length - 1];
    const oldest = first(suiteRuns, 'suite run');
    if (!current) throw new Error('no suite run was seeded');
    const terms = { issuedAt: new Date(), version: 0 };
    const sign = (subject: 'run' | 'suite-run', id: string) => signViewLink(BENCH_KEYS.view, subject, id, terms);
    const runs = (ids: string[]) => ids.map((id) => ({ id }) as ViewRun);
    const historyOf = async (ids: string[]) => attachHistory(sign, runs(ids), await readHistory(db, { runIds: ids }));
    const load = stats(await sample(40, 5, () => historyOf(current.open)));
    const one = stats(await sample(40, 5, () => historyOf(current.open.slice(0, 1))));
    // The statement alone, as Postgres times it: the same text the loader sends.
    const planned: number[] = [];
    for (let i = 0; i < 20; i++) {
      const plan = await db.$queryRawUnsafe<Array<{ 'QUERY PLAN': string }>>(
        `EXPLAIN (ANALYZE) ${historySql('cur.id = ANY($1::text[])')}`,
        current.open,
      );
      const line = plan.map((p) => p['QUERY PLAN']).find((l) => l.startsWith('Execution Time'));
      planned.push(Number(/([\d.]+) ms/.exec(line ?? '')?.[1] ?? Number.NaN));
    }
    const statement = stats(planned);

    const view = await serveView(db);
    const get = (suiteRunId: string) => async () => {
      const res = await fetch(view.suitePage(suiteRunId), { headers: { 'accept-encoding': 'identity' } });
      if (res.status !== 200) throw new Error(`status ${res.status}`);
      return res.text();
    };
    const page = stats(await sample(25, 5, get(current.id)));
    const firstPage = stats(await sample(25, 5, get(oldest.id)));
    await view.close();

    const row = (name: string, s: ReturnType<typeof stats>) =>
      `| ${name} | ${s.median.toFixed(1)} ms | ${s.p95.toFixed(1)} ms | ${s.min.toFixed(1)} ms |`;
    const markdown = [
      `\`pnpm bench view-history\`, ${machineLine()}: ${TESTS} tests, ${current.open.length} of them open; ` +
        `${EARLIER} earlier suite runs of the suite (${runCount} runs in Postgres), so each open test's history is 20 marks.`,
      '',
      '| measure | median | p95 | min |',
      '|---|---|---|---|',
      row(
        `History of the ${current.open.length} open tests (one statement, ${current.open.length * 20} links signed)`,
        load,
      ),
      row("One run's history (run page, fragment)", one),
      row('The statement in Postgres (`EXPLAIN ANALYZE`)', statement),
      row('GET suite page with 20-mark histories, uncompressed', page),
      row("GET the first suite run's page (1-mark histories), uncompressed", firstPage),
    ].join('\n');
    writeSection('view-history', markdown, path.resolve(__dirname, '../docs/VIEW.md'));
    process.stdout.write(`${markdown}\n`);
  } finally {
    await db.$disconnect();
    await dropDatabase(databaseUrl).catch(() => undefined);
  }
}
