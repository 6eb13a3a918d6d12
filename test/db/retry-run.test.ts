import type { Db } from '@testrun/core/db';
import { abortRun, finishRun, retryRun, startRun } from '@testrun/core/runs';
import { applySampleProject, createTenant, insertSuiteRuns, sampleProject, testDb } from '../support/harness';
import { present } from '../support/present';

/**
 * The retry transition against Postgres: it records the ended attempt and starts the next one in
 * one statement, only for the attempt that owns the run and while retries remain, and it never uses
 * up the allowance of claims after a lost worker.
 */
let db: Db;
beforeAll(() => {
  db = testDb();
});
afterAll(async () => {
  await db.$disconnect();
});

/** A suite run of one test whose run is allowed `retries` retries; the run's id. */
async function runWithRetries(retries: number): Promise<{ runId: string; suiteRunId: string }> {
  const t = await createTenant(db);
  const applied = await applySampleProject(db, t.workspace.id, sampleProject(`p-${t.tag}`, { count: 1 }));
  const suite = present(applied.suites[0], 'the sample suite');
  const created = await insertSuiteRuns(db, t.workspace.id, suite.id, { baseUrl: 'http://127.0.0.1:2', retries });
  return { runId: present(created.runIds[0], 'the run'), suiteRunId: present(created.suiteRunId, 'the suite run') };
}

const failed = {
  status: 'failed',
  code: 'expectation_failed',
  resultSummary: 'Failed at step 1 (x): y',
  message: 'y',
  step: 1,
} as const;

describe('retryRun', () => {
  it('records the failed attempt and starts the next under a new execution number; the suite run stays running', async () => {
    const { runId, suiteRunId } = await runWithRetries(2);
    const claim = present(await startRun(db, runId, 2), 'the claim');
    expect([claim.attempt, claim.retry, claim.retries]).toEqual([1, 0, 2]);

    expect(await retryRun(db, runId, 1, failed)).toEqual({ attempt: 2, retry: 1 });
    const run = await db.run.findUniqueOrThrow({ where: { id: runId } });
    expect(run).toMatchObject({ status: 'running', attempt: 2, retry: 1, resultSummary: 'Running: retry 1 of 2.' });
    const [row] = await db.runAttempt.findMany({ where: { runId } });
    expect(row).toMatchObject({
      retry: 0,
      attempt: 1,
      status: 'failed',
      outcomeCode: 'expectation_failed',
      outcomeStep: 1,
      resultSummary: failed.resultSummary,
    });
    expect(present(row, 'the attempt row').finishedAt.getTime()).toBeGreaterThanOrEqual(
      present(run.startedAt, 'started').getTime(),
    );
    expect(await db.suiteRun.findUniqueOrThrow({ where: { id: suiteRunId } })).toMatchObject({
      status: 'running',
      runningCount: 1,
      failedCount: 0,
    });

    // A late write of the attempt that was retried matches nothing.
    expect(await retryRun(db, runId, 1, failed)).toBeNull();
    expect(await finishRun(db, runId, 1, { status: 'passed', resultSummary: 'late' })).toBe(false);
    expect(await finishRun(db, runId, 2, { status: 'passed', resultSummary: 'Passed.' })).toBe(true);
    expect(await db.suiteRun.findUniqueOrThrow({ where: { id: suiteRunId } })).toMatchObject({
      status: 'passed',
      passedCount: 1,
    });
  });

  it('refuses once the retries are used up, and for a run that is not running', async () => {
    const { runId } = await runWithRetries(1);
    expect(await retryRun(db, runId, 0, failed)).toBeNull();
    present(await startRun(db, runId, 2), 'the claim');
    expect(await retryRun(db, runId, 1, failed)).toEqual({ attempt: 2, retry: 1 });
    expect(await retryRun(db, runId, 2, failed)).toBeNull();
    expect(await db.runAttempt.count({ where: { runId } })).toBe(1);
    await abortRun(db, runId, { code: 'timeout', resultSummary: 'Error: time budget exceeded.' });
    expect(await retryRun(db, runId, 2, failed)).toBeNull();
  });

  it('leaves the lost-worker allowance to claims: a retried run can still be taken over once', async () => {
    const { runId } = await runWithRetries(3);
    present(await startRun(db, runId, 2), 'the first claim');
    expect(await retryRun(db, runId, 1, failed)).toEqual({ attempt: 2, retry: 1 });
    expect(await retryRun(db, runId, 2, failed)).toEqual({ attempt: 3, retry: 2 });
    // The worker is lost mid-retry: another takes the same test attempt over, under a new execution.
    const over = present(await startRun(db, runId, 2), 'the take-over');
    expect([over.attempt, over.retry]).toEqual([4, 2]);
    // Lost again: no claim is left, whatever the retries.
    expect(await startRun(db, runId, 2)).toBeNull();
  });

  it("records a try the test's runner retried (a Playwright config's): past the run's retries, with the try's own times, the deadline kept", async () => {
    const { runId } = await runWithRetries(0);
    present(await startRun(db, runId, 2), 'the claim');
    const before = await db.run.findUniqueOrThrow({ where: { id: runId } });
    // Without the runner's word, a run with no retries left is not retried.
    expect(await retryRun(db, runId, 1, failed)).toBeNull();
    const now = Date.now();
    const ran = { startedAt: new Date(now - 5_000), finishedAt: new Date(now - 3_000) };
    expect(await retryRun(db, runId, 1, failed, [], ran)).toEqual({ attempt: 2, retry: 1 });
    const run = await db.run.findUniqueOrThrow({ where: { id: runId } });
    expect(run).toMatchObject({
      status: 'running',
      attempt: 2,
      retry: 1,
      retries: 0,
      resultSummary: 'Running: retry 1.',
    });
    expect(run.deadlineAt).toEqual(before.deadlineAt);
    expect(await db.runAttempt.findMany({ where: { runId } })).toEqual([
      expect.objectContaining({ retry: 0, attempt: 1, status: 'failed', ...ran, durationMs: 2_000 }),
    ]);
    // Passed now: the run is flaky (passed with retry > 0), whatever its own retries.
    expect(await finishRun(db, runId, 2, { status: 'passed', resultSummary: 'Passed' })).toBe(true);
  });
});
