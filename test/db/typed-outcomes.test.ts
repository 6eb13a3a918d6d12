import { Client, DatabaseError } from 'pg';
import { DB_ENUMS, type Db } from '@testrun/core/db';
import { ID_PREFIX, newId } from '@testrun/core/ids';
import { finishRun, readRun, startRun } from '@testrun/core/runs';
import { applySampleProject, createTenant, sampleProject, testDb } from '../support/harness';

/**
 * The closed sets of contracts are closed in Postgres too: the database holds exactly their values
 * and refuses anything else, including a code of the wrong kind for the run's status.
 */
let db: Db;
let pg: Client;
beforeAll(async () => {
  db = testDb();
  pg = new Client({ connectionString: process.env.DATABASE_URL });
  await pg.connect();
});
afterAll(async () => {
  await pg.end();
  await db.$disconnect();
});

/** The SQLSTATE Postgres answered a statement with; null when it was accepted. */
async function refusal(sql: string, params: unknown[]): Promise<string | null> {
  try {
    await pg.query(sql, params);
    return null;
  } catch (error) {
    if (error instanceof DatabaseError) return error.code ?? 'unknown';
    throw error;
  }
}

const INVALID_ENUM_VALUE = '22P02';
const CHECK_VIOLATION = '23514';

/** A run of its own, `running` on attempt 1. */
async function runningRun(): Promise<string> {
  const t = await createTenant(db);
  const applied = await applySampleProject(db, t.workspace.id, sampleProject(`p-${t.tag}`, { count: 1 }));
  const test = await db.test.findFirstOrThrow({ where: { projectId: applied.projectId } });
  const id = newId(ID_PREFIX.run);
  await db.run.create({
    data: {
      id,
      workspaceId: t.workspace.id,
      projectId: applied.projectId,
      suiteId: test.suiteId,
      testId: test.id,
      position: 0,
      status: 'queued',
      baseUrl: 'http://127.0.0.1:2',
      testName: test.name,
      steps: [],
      timeoutMs: test.timeoutMs,
      resultSummary: 'Queued.',
    },
  });
  await startRun(db, id, 2);
  return id;
}

describe('database enums', () => {
  it.each(Object.entries(DB_ENUMS))('%s holds exactly the values of contracts, in order', async (name, values) => {
    const { rows } = await pg.query<{ label: string }>(
      `SELECT e.enumlabel AS label FROM pg_enum e JOIN pg_type t ON t.oid = e.enumtypid
       WHERE t.typname = $1 ORDER BY e.enumsortorder`,
      [name],
    );
    expect(rows.map((r) => r.label)).toEqual([...values]);
  });

  it('refuse a value outside the set', async () => {
    const runId = await runningRun();
    const update = (column: string) => `UPDATE runs SET ${column} = $2 WHERE id = $1`;
    expect(await refusal(update('outcome_code'), [runId, 'target_unreachble'])).toBe(INVALID_ENUM_VALUE);
    expect(await refusal(update('skip_reason'), [runId, 'disabled'])).toBe(INVALID_ENUM_VALUE);
    const step = `INSERT INTO step_results (id, run_id, attempt, index, action, label, target, outcome, started_at, duration_ms)
      VALUES ($1, $2, 1, 1, $3, 'l', 't', $4, now(), 0)`;
    expect(await refusal(step, [newId(ID_PREFIX.step), runId, 'goto', 'passd'])).toBe(INVALID_ENUM_VALUE);
    expect(await refusal(step, [newId(ID_PREFIX.step), runId, 'navigate', 'passed'])).toBe(INVALID_ENUM_VALUE);
    expect(await refusal(step, [newId(ID_PREFIX.step), runId, 'goto', 'passed'])).toBeNull();
  });
});

describe('an outcome code matches its run status', () => {
  it('an error run refuses a failure code, and a failed run an error code', async () => {
    const erroring = await runningRun();
    const failing = await runningRun();
    const finish = `UPDATE runs SET status = $2::"RunStatus", outcome_code = $3 WHERE id = $1`;
    expect(await refusal(finish, [erroring, 'error', 'element_not_found'])).toBe(CHECK_VIOLATION);
    expect(await refusal(finish, [failing, 'failed', 'timeout'])).toBe(CHECK_VIOLATION);
    expect(await refusal(finish, [failing, 'passed', 'http_error'])).toBe(CHECK_VIOLATION);
    expect(await refusal(finish, [erroring, 'error', 'timeout'])).toBeNull();
    expect(await refusal(finish, [failing, 'failed', 'http_error'])).toBeNull();
  });

  it('a skip reason belongs to a skipped run only', async () => {
    const runId = await runningRun();
    expect(await refusal(`UPDATE runs SET skip_reason = 'test_disabled' WHERE id = $1`, [runId])).toBe(CHECK_VIOLATION);
  });

  it("a failed run's failure is the step its outcome names, not a later step's error", async () => {
    const runId = await runningRun();
    const { workspaceId } = await db.run.findUniqueOrThrow({ where: { id: runId }, select: { workspaceId: true } });
    const step = (index: number, error: string) => ({
      ...{
        id: newId(ID_PREFIX.step),
        runId,
        attempt: 1,
        index,
        category: 'expect',
        label: `step ${index}`,
        target: '',
      },
      ...{ outcome: 'failed' as const, error, startedAt: new Date(), durationMs: 1 },
    });
    // A Playwright test's expectation failed at step 2; its teardown (step 5) then failed too.
    await db.stepResult.createMany({ data: [step(2, 'expect failed'), step(5, 'video.saveAs: ENOENT')] });
    const outcome = { status: 'failed', code: 'expectation_failed', step: 2, resultSummary: 'Failed.' } as const;
    await expect(finishRun(db, runId, 1, outcome)).resolves.toBe(true);
    expect((await readRun(db, workspaceId, runId))?.run.failure?.message).toBe('expect failed');
  });

  it('finishRun writes a typed outcome that reads back as written', async () => {
    const runId = await runningRun();
    const outcome = { status: 'failed', code: 'expectation_failed', step: 2, resultSummary: 'Failed.' } as const;
    await expect(finishRun(db, runId, 1, outcome)).resolves.toBe(true);
    await expect(
      db.run.findUniqueOrThrow({
        where: { id: runId },
        select: { status: true, outcomeCode: true, outcomeStep: true },
      }),
    ).resolves.toEqual({ status: 'failed', outcomeCode: 'expectation_failed', outcomeStep: 2 });
  });
});
