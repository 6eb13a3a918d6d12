import { Client } from 'pg';
import type { Db } from '@testrun/core/db';
import { createLogger } from '@testrun/core/logger';
import type { RunQueue } from '@testrun/core/queue';
import {
  playwrightBatchWallMs,
  PLAYWRIGHT_TIME,
  releaseBatch,
  renewBatch,
  reserveBatch,
  retryRun,
  startRun,
} from '@testrun/core/runs';
import { Reconciler } from '@testrun/worker';
import { claimRun } from '../../apps/worker/src/run/claim';
import { applySampleProject, createTenant, insertSuiteRuns, sampleProject } from '../support/harness';
import { openQueueAndDb } from '../support/queue-and-db';

/*
 * Playwright batches against real Postgres (docs/PLAYWRIGHT.md, "Batches"): which queued runs a
 * batch reserves, that only the batch claims them while its lease lives, and that a lapsed lease
 * (its worker died) gives them back to their jobs and the reconciler.
 */
let db: Db;
let queue: RunQueue;
let close: () => Promise<void>;
const logger = createLogger({ service: 'test', level: 'error' });

beforeAll(() => {
  ({ db, queue, close } = openQueueAndDb());
});
afterAll(() => close());

/** Six queued Playwright runs of one suite run: two tests in each of a.spec, b.spec, c.spec. */
type Six = [string, string, string, string, string, string];

async function playwrightSuiteRun(): Promise<Six> {
  const t = await createTenant(db);
  const applied = await applySampleProject(db, t.workspace.id, sampleProject(`p-${t.tag}`, { count: 6 }));
  const [suite] = applied.suites;
  if (!suite) throw new Error('the sample project has no suite');
  const { runIds } = await insertSuiteRuns(db, t.workspace.id, suite.id, { baseUrl: 'http://127.0.0.1:2' });
  for (const [i, id] of runIds.entries()) {
    const file = `${'abc'[Math.floor(i / 2)]}.spec.ts`;
    const playwright = { bundle: `sha256:${'0'.repeat(64)}`, config: 'playwright.config.ts', file, line: i + 1 };
    await db.run.update({
      where: { id },
      data: {
        kind: 'playwright',
        steps: {
          playwright: { ...playwright, column: 1, titlePath: [`t${i}`], project: 'app', browser: 'chromium', tags: [] },
        },
        createdAt: new Date(Date.now() - 60_000),
      },
    });
  }
  const [a1, a2, b1, b2, c1, c2] = runIds;
  if (!a1 || !a2 || !b1 || !b2 || !c1 || !c2) throw new Error('the sample suite run does not have six runs');
  return [a1, a2, b1, b2, c1, c2];
}

const claim = (id: string, batchId: string | null = null) => db.$transaction((tx) => startRun(tx, id, 3, batchId));

test("a batch takes the leader's file whole, then whole files up to its share; a second batch takes the rest", async () => {
  const [a1, a2, b1, b2, c1, c2] = await playwrightSuiteRun();
  expect(await claim(a1)).not.toBeNull();
  // Six runs between two batches: three each, the leader's file first, then b.spec whole.
  expect(await reserveBatch(db, { batchId: 'batch-1', leaderId: a1, share: 2, maxRuns: 100 })).toEqual([a2, b1, b2]);
  // b1 is held: its own job does not claim it (its claim says why, in the same statement), the batch does.
  expect(await claim(b1)).toBeNull();
  expect(await claimRun(db, b1, logger)).toEqual({ unclaimable: 'batched' });
  expect(await claim(b1, 'batch-1')).toEqual(expect.objectContaining({ id: b1, attempt: 1 }));
  // The other worker slot leads the rest: one way left, so it takes all that is free.
  expect(await claim(c1)).not.toBeNull();
  expect(await reserveBatch(db, { batchId: 'batch-2', leaderId: c1, share: 2, maxRuns: 100 })).toEqual([c2]);
  const rows = await db.run.findMany({
    where: { id: { in: [a1, a2, b1, b2, c1, c2] } },
    orderBy: { position: 'asc' },
  });
  expect(rows.map((r) => r.batchId)).toEqual(['batch-1', 'batch-1', 'batch-1', 'batch-1', 'batch-2', 'batch-2']);
  // The lease counts the runs not ended; a release frees them (the leader ended; b2 never began).
  await db.run.update({ where: { id: a1 }, data: { status: 'passed', finishedAt: new Date() } });
  expect(await renewBatch(db, 'batch-1')).toBe(3);
  expect((await releaseBatch(db, 'batch-1')).sort()).toEqual([a2, b1, b2].sort());
  // b1 still runs, held by its worker: b2, of its file, waits for it (its job comes back later).
  await db.run.update({ where: { id: b1 }, data: { heldUntil: new Date(Date.now() + 60_000) } });
  expect(await claimRun(db, b2, logger)).toEqual({ unclaimable: 'waiting' });
  await db.run.update({ where: { id: b1 }, data: { status: 'passed', finishedAt: new Date() } });
  expect(await claim(b2)).not.toBeNull();
  // A job whose run ended, or is gone, finds nothing to run either.
  expect(await claimRun(db, a1, logger)).toEqual({ unclaimable: 'terminal' });
  expect(await claimRun(db, 'no-such-run', logger)).toEqual({ unclaimable: 'missing' });
});

test('a batch of size 1 reserves nothing; runs of another bundle or of another suite run are never taken', async () => {
  const [a1, a2, b1] = await playwrightSuiteRun();
  const other = await playwrightSuiteRun();
  await db.run.update({
    where: { id: b1 },
    data: {
      steps: {
        playwright: {
          bundle: `sha256:${'1'.repeat(64)}`,
          config: 'playwright.config.ts',
          file: 'b.spec.ts',
          line: 1,
          column: 1,
          titlePath: ['x'],
          project: 'app',
          browser: 'chromium',
          tags: [],
        },
      },
    },
  });
  await claim(a1);
  expect(await reserveBatch(db, { batchId: 'solo', leaderId: a1, share: 1, maxRuns: 1 })).toEqual([a2]);
  const taken = await reserveBatch(db, { batchId: 'wide', leaderId: a1, share: 1, maxRuns: 100 });
  expect(taken).not.toContain(b1);
  expect(taken.some((id) => other.includes(id))).toBe(false);
});

test('the reconciler leaves the jobs of held runs alone, and gives a lapsed batch its runs back', async () => {
  const [a1, a2, b1] = await playwrightSuiteRun();
  await claim(a1);
  await reserveBatch(db, { batchId: 'dies', leaderId: a1, share: 1, maxRuns: 100 });
  await claim(a2, 'dies');
  const reconciler = new Reconciler({ db, queue, logger, queuedGraceMs: 1_000 });
  await db.run.update({ where: { id: a2 }, data: { startedAt: new Date(Date.now() - 60_000) } });
  const held = await reconciler.runOnce();
  expect(held.requeued).not.toContain(a2);
  expect(held.requeued).not.toContain(b1);
  // The batch's worker died: its lease lapses, and the runs go back to their jobs.
  await db.run.updateMany({ where: { batchId: 'dies' }, data: { batchLeaseUntil: new Date(Date.now() - 1_000) } });
  const lapsed = await reconciler.runOnce();
  expect(lapsed.requeued).toEqual(expect.arrayContaining([a2, b1]));
  expect(await claim(a2)).toEqual(expect.objectContaining({ id: a2, attempt: 2 }));
  for (const id of lapsed.requeued) await queue.remove(id);
});

test("a cancel holding the leader while it locks the batch's runs never deadlocks with the reservation", async () => {
  const [a1, a2, b1] = await playwrightSuiteRun();
  await claim(a1);
  // A cancel locks runs in id order: here the leader first, then a run the batch would take.
  const cancel = new Client({ connectionString: process.env.DATABASE_URL });
  await cancel.connect();
  try {
    await cancel.query('BEGIN');
    await cancel.query('SELECT id FROM runs WHERE id = $1 FOR UPDATE', [a1]);
    const reserving = reserveBatch(db, { batchId: 'racing', leaderId: a1, share: 1, maxRuns: 100 });
    // Give the reservation time to reach its locks (a deadlock would show as an error of either).
    await new Promise((resolve) => setTimeout(resolve, 300));
    await cancel.query('SELECT id FROM runs WHERE id = ANY($1::text[]) ORDER BY id FOR UPDATE', [[a2, b1]]);
    await cancel.query('COMMIT');
    expect(await reserving).toEqual(expect.arrayContaining([a2, b1]));
  } finally {
    await cancel.end();
  }
});

test('a leader that finds the candidates held by another reserving leader waits for it, then takes its share', async () => {
  const [a1, a2, b1, b2, c1, c2] = await playwrightSuiteRun();
  await claim(a1);
  await claim(c1);
  // Another leader's reservation in flight: it holds every candidate while it picks its share.
  const other = new Client({ connectionString: process.env.DATABASE_URL });
  await other.connect();
  try {
    await other.query('BEGIN');
    await other.query('SELECT id FROM runs WHERE id = ANY($1::text[]) ORDER BY id FOR UPDATE', [[a2, b1, b2, c2]]);
    const reserving = reserveBatch(db, { batchId: 'second', leaderId: c1, share: 2, maxRuns: 100 });
    await new Promise((resolve) => setTimeout(resolve, 200));
    // It reserved a2, b1 and b2 for its leader a1, and lets go.
    await other.query(
      `UPDATE runs SET batch_id = 'first', batch_lease_until = now() + interval '1 minute' WHERE id = ANY($1::text[])`,
      [[a1, a2, b1, b2]],
    );
    await other.query('COMMIT');
    // Not nothing, as if no run were left: c2, what the first batch left.
    expect(await reserving).toEqual([c2]);
  } finally {
    await other.end();
  }
});

test('tests Playwright may run apart from their file (parallel) are shared out one by one', async () => {
  const runs = await playwrightSuiteRun();
  for (const id of runs)
    await db.$executeRaw`UPDATE runs SET steps = jsonb_set(steps, '{playwright,parallel}', 'true') WHERE id = ${id}`;
  const [a1, a2, b1, b2, c1, c2] = runs;
  await claim(a1);
  // Six runs, two ways: three in each batch, whatever their files.
  expect(await reserveBatch(db, { batchId: 'parallel-1', leaderId: a1, share: 2, maxRuns: 100 })).toEqual([a2, b1]);
  await claim(b2);
  expect(await reserveBatch(db, { batchId: 'parallel-2', leaderId: b2, share: 2, maxRuns: 100 })).toEqual([c1, c2]);
});

test('runs that joined the leader (one Playwright worker each) take their share with it, their files whole, stamped with the batch', async () => {
  const [a1, a2, b1, b2, c1, c2] = await playwrightSuiteRun();
  // This worker's two slots claimed a1 and b1 at the same moment: b1 joins a1's batch.
  await claim(a1);
  await claim(b1);
  // Two workers of a share of 3: two thirds of the six runs, a.spec and b.spec whole.
  const joined = { batchId: 'joined', leaderId: a1, joined: [b1], share: 3, maxRuns: 100 };
  expect(await reserveBatch(db, joined)).toEqual([a2, b2]);
  // The third slot leads what is left.
  await claim(c1);
  expect(await reserveBatch(db, { batchId: 'rest', leaderId: c1, share: 3, maxRuns: 100 })).toEqual([c2]);
  const rows = await db.run.findMany({ where: { id: { in: [a1, a2, b1, b2] } } });
  expect(rows.map((r) => r.batchId)).toEqual(['joined', 'joined', 'joined', 'joined']);
  // Nothing queued is left to share, yet the leader and a joined run still make a batch.
  const [d1, , e1] = await playwrightSuiteRun();
  await claim(d1);
  await claim(e1);
  await db.$executeRaw`UPDATE runs SET status = 'skipped', finished_at = now()
    WHERE suite_run_id = (SELECT suite_run_id FROM runs WHERE id = ${d1}) AND status = 'queued'`;
  expect(await reserveBatch(db, { batchId: 'pair', leaderId: d1, joined: [e1], share: 2, maxRuns: 100 })).toEqual([]);
  expect(await renewBatch(db, 'pair')).toBe(2);
});

test("a file's tests are never split: a claim waits while a sibling runs live elsewhere, a batch leaves that file alone", async () => {
  const [a1, a2, b1, b2, c1] = await playwrightSuiteRun();
  const holdMs = 60_000;
  // a1 runs on one worker (held); a2, of its file, waits; b1 of another file is claimed.
  expect(await db.$transaction((tx) => startRun(tx, a1, 3, null, null, holdMs))).not.toBeNull();
  expect(await claimRun(db, a2, logger)).toEqual({ unclaimable: 'waiting' });
  expect(await claim(b1)).not.toBeNull();
  // b1's batch takes its own file and c.spec, never a.spec, whose a1 runs elsewhere.
  const taken = await reserveBatch(db, { batchId: 'elsewhere', leaderId: b1, share: 1, maxRuns: 100 });
  expect(taken).toContain(b2);
  expect(taken).toContain(c1);
  expect(taken).not.toContain(a2);
  // a1's own batch takes a2; the batch claims it.
  expect(await reserveBatch(db, { batchId: 'own', leaderId: a1, share: 1, maxRuns: 100 })).toEqual([a2]);
  expect(await claim(a2, 'own')).toEqual(expect.objectContaining({ id: a2 }));
});

test('a sibling whose worker died blocks nothing, and tests that run apart (parallel) never wait', async () => {
  const [a1, a2, b1, b2] = await playwrightSuiteRun();
  // a1 was claimed, then its worker died: its hold lapsed.
  expect(await db.$transaction((tx) => startRun(tx, a1, 3, null, null, 60_000))).not.toBeNull();
  await db.run.update({ where: { id: a1 }, data: { heldUntil: new Date(Date.now() - 1_000) } });
  expect(await claim(a2)).not.toBeNull();
  for (const id of [b1, b2]) {
    const row = await db.run.findUniqueOrThrow({ where: { id } });
    const steps = row.steps as { playwright: Record<string, unknown> };
    await db.run.update({ where: { id }, data: { steps: { playwright: { ...steps.playwright, parallel: true } } } });
  }
  expect(await db.$transaction((tx) => startRun(tx, b1, 3, null, null, 60_000))).not.toBeNull();
  expect(await claim(b2)).not.toBeNull();
});

test("a Playwright run's deadline is a safety net hours behind Playwright's own time; the reconciler ends it only past that, saying so", async () => {
  const [a1, a2] = await playwrightSuiteRun();
  // Its stored budget (a step test's time) is not its time: Playwright's timeouts are.
  await db.run.updateMany({ where: { id: { in: [a1, a2] } }, data: { timeoutMs: 1_000 } });
  const claimed = await claim(a1);
  expect(claimed).not.toBeNull();
  const deadline = (id: string) => db.run.findUniqueOrThrow({ where: { id } }).then((r) => r.deadlineAt?.getTime());
  const ahead = ((await deadline(a1)) ?? 0) - Date.now();
  expect(ahead).toBeGreaterThan(PLAYWRIGHT_TIME.deadlineMs - 60_000);
  // Well past its stored budget and the grace, the reconciler leaves it to its worker.
  const reconciler = new Reconciler({ db, queue, logger, deadlineGraceMs: 0 });
  await new Promise((resolve) => setTimeout(resolve, 1_200));
  expect((await reconciler.runOnce()).timedOut).not.toContain(a1);
  // A retry of the run (the request's retries) keeps the safety net.
  await db.run.update({ where: { id: a1 }, data: { retries: 1 } });
  expect(
    await retryRun(db, a1, 1, { status: 'failed', code: 'expectation_failed', message: 'x', resultSummary: 'x' }),
  ).not.toBeNull();
  expect(((await deadline(a1)) ?? 0) - Date.now()).toBeGreaterThan(PLAYWRIGHT_TIME.deadlineMs - 60_000);
  // Past the safety net, the reconciler ends it, and says which limit it was.
  await db.run.update({ where: { id: a1 }, data: { deadlineAt: new Date(Date.now() - 1_000) } });
  expect((await reconciler.runOnce()).timedOut).toContain(a1);
  const ended = await db.run.findUniqueOrThrow({ where: { id: a1 } });
  expect([ended.status, ended.outcomeCode, ended.resultSummary]).toEqual([
    'error',
    'timeout',
    "Error: still running after 4 h 10 min, the service's limit for a Playwright test (the worker did not report back).",
  ]);
  // A batch's sandbox: 5 min a test, at least a test alone's, at most 4 h.
  expect([1, 3, 1_000].map((n) => playwrightBatchWallMs(n, 600_000))).toEqual([600_000, 900_000, 4 * 3_600_000]);
});
