import type { Db, DbTx } from '@testrun/core/db';
import { abortRun, canTransition, deriveSuiteStatus, finishRun, startRun } from '@testrun/core/runs';
import { countStatuses, RUN_STATUSES } from '@testrun/contracts';
import { applySampleProject, createTenant, insertSuiteRuns, sampleProject, testDb } from '../support/harness';
import { present } from '../support/present';

/**
 * The run state machine against Postgres: whatever the order of claims, finishes, aborts and
 * duplicate deliveries, a suite run's counters equal a count of its children and its status is
 * what deriveSuiteStatus gives for them.
 */
let db: Db;
beforeAll(() => {
  db = testDb();
});
afterAll(async () => {
  await db.$disconnect();
});

async function createSuiteRun(children: number, disabled: number): Promise<string> {
  const t = await createTenant(db);
  const applied = await applySampleProject(
    db,
    t.workspace.id,
    sampleProject(`p-${t.tag}`, { count: children, disabled }),
  );
  const [suite] = applied.suites;
  if (!suite) throw new Error('the sample project has no suite');
  const { suiteRunId } = await insertSuiteRuns(db, t.workspace.id, suite.id, { baseUrl: 'http://127.0.0.1:2' });
  if (!suiteRunId) throw new Error('no suite run was created');
  return suiteRunId;
}

async function expectConsistent(suiteRunId: string) {
  const suiteRun = await db.suiteRun.findUniqueOrThrow({ where: { id: suiteRunId }, include: { runs: true } });
  const counts = countStatuses(suiteRun.runs.map((r) => r.status));
  const stored: Record<string, number> = { total: suiteRun.totalCount };
  for (const status of RUN_STATUSES) stored[status] = suiteRun[`${status}Count`];
  expect(stored).toEqual(counts);
  expect(suiteRun.status).toBe(deriveSuiteStatus(counts));
  const terminal = !['queued', 'running'].includes(suiteRun.status);
  expect(suiteRun.finishedAt !== null).toBe(terminal);
  // It spans its runs: from the first start (or earlier, when a queued run was ended) to the last finish.
  const times = (pick: (r: (typeof suiteRun.runs)[number]) => Date | null) =>
    suiteRun.runs.map(pick).flatMap((t) => (t ? [t.getTime()] : []));
  const starts = times((r) => r.startedAt);
  if (starts.length > 0) expect(suiteRun.startedAt?.getTime()).toBeLessThanOrEqual(Math.min(...starts));
  if (terminal) expect(suiteRun.finishedAt?.getTime()).toBe(Math.max(...times((r) => r.finishedAt)));
  return suiteRun;
}

/**
 * Runs `early` in a transaction that began before `late`'s (so its now() is the earlier) but
 * reaches the suite run after `late` committed.
 */
async function outOfOrder(early: (tx: DbTx) => Promise<unknown>, late: (tx: DbTx) => Promise<unknown>) {
  let begun = () => {};
  const began = new Promise<void>((resolve) => (begun = resolve));
  let go = () => {};
  const proceed = new Promise<void>((resolve) => (go = resolve));
  const first = db.$transaction(async (tx) => {
    await tx.$queryRaw`SELECT now()`;
    begun();
    await proceed;
    await early(tx);
  });
  await began;
  await new Promise((resolve) => setTimeout(resolve, 20));
  await db.$transaction((tx) => late(tx));
  go();
  await first;
}

/** A small deterministic generator, so a failure replays. */
function random(seed: number) {
  let x = seed;
  return () => (x = (x * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
}

describe('run state machine', () => {
  it('keeps counters and status equal to the children through random interleavings', async () => {
    for (const seed of [1, 2, 3, 4, 5]) {
      const rand = random(seed);
      const suiteRunId = await createSuiteRun(4, seed % 2);
      await expectConsistent(suiteRunId);
      const runs = await db.run.findMany({ where: { suiteRunId }, select: { id: true } });
      for (let op = 0; op < 30; op++) {
        const run = present(runs[Math.floor(rand() * runs.length)], 'a child run');
        const current = await db.run.findUniqueOrThrow({ where: { id: run.id } });
        const pick = rand();
        if (pick < 0.4) await startRun(db, run.id, 2);
        else if (pick < 0.8) {
          const status = present((['passed', 'failed', 'error'] as const)[Math.floor(rand() * 3)], 'a status');
          // A stale attempt now and then: it must change nothing.
          const attempt = rand() < 0.2 ? current.attempt - 1 : current.attempt;
          await finishRun(db, run.id, attempt, { status, resultSummary: status });
        } else await abortRun(db, run.id, { code: 'timeout', resultSummary: 'Error: time budget exceeded.' });
        // Every move the statements made is one the status graph allows; terminal states never change.
        const after = await db.run.findUniqueOrThrow({ where: { id: run.id } });
        if (after.status !== current.status) expect(canTransition(current.status, after.status)).toBe(true);
        await expectConsistent(suiteRunId);
      }
    }
  });

  it('counts each child once when finishes race', async () => {
    const suiteRunId = await createSuiteRun(6, 0);
    const runs = await db.run.findMany({ where: { suiteRunId } });
    const claims = await Promise.all(runs.map((r) => startRun(db, r.id, 2)));
    expect(claims.every((c) => c?.attempt === 1)).toBe(true);
    expect((await expectConsistent(suiteRunId)).status).toBe('running');
    // Every run finished twice at once (a duplicate delivery) plus an abort racing them.
    const results = await Promise.all(
      runs.flatMap((r, i) => [
        finishRun(db, r.id, 1, { status: i === 0 ? 'failed' : 'passed', resultSummary: 'done' }),
        finishRun(db, r.id, 1, { status: 'passed', resultSummary: 'duplicate' }),
        abortRun(db, r.id, { code: 'worker_lost', resultSummary: 'lost' }),
      ]),
    );
    expect(results.filter(Boolean)).toHaveLength(runs.length);
    const final = await expectConsistent(suiteRunId);
    expect(final.passedCount + final.failedCount + final.errorCount).toBe(6);
  });

  it('spans its runs when transactions reach the suite run in another order than they began', async () => {
    const suiteRunId = await createSuiteRun(2, 0);
    const [a, b] = await db.run.findMany({ where: { suiteRunId }, orderBy: { position: 'asc' } });
    if (!a || !b) throw new Error('two runs expected');
    await outOfOrder(
      (tx) => startRun(tx, a.id, 2),
      (tx) => startRun(tx, b.id, 2),
    );
    const started = await expectConsistent(suiteRunId);
    expect(started.startedAt).toEqual(started.runs.find((r) => r.id === a.id)?.startedAt);
    await outOfOrder(
      (tx) => finishRun(tx, a.id, 1, { status: 'passed', resultSummary: 'a' }),
      (tx) => finishRun(tx, b.id, 1, { status: 'passed', resultSummary: 'b' }),
    );
    const finished = await expectConsistent(suiteRunId);
    expect(finished.status).toBe('passed');
    expect(finished.finishedAt).toEqual(finished.runs.find((r) => r.id === b.id)?.finishedAt);
  });

  it('claims return the snapshot and refuse a run out of attempts', async () => {
    const suiteRunId = await createSuiteRun(1, 0);
    const run = await db.run.findFirstOrThrow({ where: { suiteRunId } });
    const first = await startRun(db, run.id, 2);
    expect(first).toMatchObject({
      attempt: 1,
      prevStatus: 'queued',
      id: run.id,
      baseUrl: 'http://127.0.0.1:2',
      timeoutMs: run.timeoutMs,
      steps: run.steps,
    });
    const second = await startRun(db, run.id, 2);
    expect(second).toMatchObject({ attempt: 2, prevStatus: 'running' });
    expect(await startRun(db, run.id, 2)).toBeNull();
    expect((await expectConsistent(suiteRunId)).runningCount).toBe(1);
  });
});
