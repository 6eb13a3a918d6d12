import type { Db } from '@testrun/core/db';
import { createLogger } from '@testrun/core/logger';
import { addRunJobs, type RunQueue } from '@testrun/core/queue';
import { finishRun, startRun } from '@testrun/core/runs';
import { Worker, type Job } from 'bullmq';
import { Redis } from 'ioredis';
import { Client } from 'pg';
import { JOBS } from '@testrun/contracts';
import { Reconciler, RECONCILER_LOCK_KEY, RunHolds } from '@testrun/worker';
import { applySampleProject, createTenant, insertSuiteRuns, sampleProject } from '../support/harness';
import { present } from '../support/present';
import { openQueueAndDb } from '../support/queue-and-db';

/** The reconciler against real Postgres and Redis: what it repairs, and that one pass runs at a time. */
let db: Db;
let queue: RunQueue;
let close: () => Promise<void>;
const logger = createLogger({ service: 'test', level: 'error' });

beforeAll(() => {
  ({ db, queue, close } = openQueueAndDb());
});
afterAll(() => close());

async function queuedRuns(count: number, createdSecondsAgo = 60) {
  const t = await createTenant(db);
  const applied = await applySampleProject(db, t.workspace.id, sampleProject(`p-${t.tag}`, { count }));
  const [suite] = applied.suites;
  if (!suite) throw new Error('the sample project has no suite');
  const { runIds: ids } = await insertSuiteRuns(db, t.workspace.id, suite.id, {
    baseUrl: 'http://127.0.0.1:2',
    suiteRun: false,
  });
  await db.run.updateMany({
    where: { id: { in: ids } },
    data: { createdAt: new Date(Date.now() - createdSecondsAgo * 1000), timeoutMs: 1_000 },
  });
  return { ids, workspaceId: t.workspace.id };
}

async function oneQueuedRun(createdSecondsAgo?: number): Promise<string> {
  return present((await queuedRuns(1, createdSecondsAgo)).ids[0], 'the queued run');
}

const reconciler = (deadlineGraceMs = 0) =>
  new Reconciler({ db, queue, logger, deadlineGraceMs, queuedGraceMs: 1_000 });

describe('reconciler', () => {
  it('re-adds the job of a queued run that has none, and leaves one that has a job alone', async () => {
    const [withJob, withoutJob] = (await queuedRuns(2)).ids.map((id) => present(id, 'a queued run'));
    await addRunJobs(queue, [present(withJob, 'the run with a job')]);
    const report = await reconciler().runOnce();
    expect(report.ran).toBe(true);
    expect(report.requeued).toContain(withoutJob);
    expect(report.requeued).not.toContain(withJob);
    expect((await queue.getJob(present(withoutJob, 'the run without a job')))?.data).toEqual({ runId: withoutJob });
  });

  it('leaves a fresh queued run to the API that is adding its job', async () => {
    const id = await oneQueuedRun(0);
    const report = await reconciler().runOnce();
    expect(report.requeued).not.toContain(id);
  });

  it('gives no job to a run that finished between its read and its job state read', async () => {
    const id = await oneQueuedRun();
    await startRun(db, id, 2);
    await db.run.update({ where: { id }, data: { startedAt: new Date(Date.now() - 60_000) } });
    // The worker's order: the outcome reaches Postgres, then the job completes and is removed.
    // Here that happens inside the reconciler's pass, right before it asks for the job's state.
    const racing = new Proxy(queue, {
      get(target, property) {
        if (property === 'getJobState')
          return async (jobId: string) => {
            if (jobId === id) await finishRun(db, id, 1, { status: 'passed', resultSummary: 'Passed.' });
            return target.getJobState(jobId);
          };
        const value: unknown = Reflect.get(target, property, target);
        return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
      },
    });
    const report = await new Reconciler({ db, queue: racing, logger, queuedGraceMs: 1_000 }).runOnce();
    expect(report.requeued).not.toContain(id);
    expect(await queue.getJobState(id)).toBe('unknown');
    expect((await db.run.findUniqueOrThrow({ where: { id } })).status).toBe('passed');
  });

  it('ends a running run past its deadline as error/timeout', async () => {
    const id = await oneQueuedRun();
    await startRun(db, id, 2);
    await db.run.update({ where: { id }, data: { deadlineAt: new Date(Date.now() - 5_000) } });
    await addRunJobs(queue, [id]);
    const report = await reconciler().runOnce();
    expect(report.timedOut).toContain(id);
    const run = await db.run.findUniqueOrThrow({ where: { id } });
    expect(run).toMatchObject({ status: 'error', outcomeCode: 'timeout', headersSealed: null });
    expect(run.resultSummary).toMatch(/time budget of 1 s exceeded/);
  });

  it('leaves a running run whose job is gone to the live worker that holds it, and re-adds its job once the hold lapses', async () => {
    // Redis lost the job (flushed) while the worker that claimed the run still runs it.
    const id = await oneQueuedRun();
    const claim = present(await startRun(db, id, 2, null, null, 60_000), 'the claim');
    await db.run.update({ where: { id }, data: { startedAt: new Date(Date.now() - 60_000) } });
    expect((await db.run.findUniqueOrThrow({ where: { id } })).heldUntil?.getTime()).toBeGreaterThan(Date.now());
    expect((await reconciler().runOnce()).requeued).not.toContain(id);
    expect(await queue.getJobState(id)).toBe('unknown');

    // The worker renews its hold while it runs the run: a hold past its time is live again.
    const holds = new RunHolds(db, 60_000, logger);
    const lapse = () => db.run.update({ where: { id }, data: { heldUntil: new Date(Date.now() - 1_000) } });
    holds.hold(id);
    await lapse();
    await holds.renew();
    expect((await reconciler().runOnce()).requeued).not.toContain(id);

    // Released (the worker is done with it) or gone, nothing renews the hold: once it lapses, the run gets a job.
    holds.release(id);
    await lapse();
    await holds.renew();
    expect((await reconciler().runOnce()).requeued).toContain(id);
    expect((await queue.getJob(id))?.data).toEqual({ runId: id });
    expect((await db.run.findUniqueOrThrow({ where: { id } })).attempt).toBe(claim.attempt);
  });

  it("ends a run whose job failed as stalled too often worker_lost only once its worker's hold lapses", async () => {
    // BullMQ failed the job (its lock missed twice), but the worker that claimed the run still runs it.
    const id = await oneQueuedRun();
    await startRun(db, id, 2, null, null, 60_000);
    await db.run.update({ where: { id }, data: { startedAt: new Date(Date.now() - 60_000) } });
    await addRunJobs(queue, [id]);
    const connection = new Redis(present(process.env.REDIS_URL, 'REDIS_URL'), { maxRetriesPerRequest: null });
    const taker = new Worker(JOBS.run.queue, null, {
      connection,
      prefix: present(process.env.REDIS_PREFIX, 'REDIS_PREFIX'),
      autorun: false,
    });
    try {
      // Typed as always a job; undefined when the queue has none.
      const next = (): Promise<Job | undefined> => taker.getNextJob('taker');
      let job = await next();
      while (job && job.id !== id) {
        // Another test's job: back to the queue untouched, after ours.
        await job.moveToDelayed(Date.now() + 60_000, 'taker');
        job = await next();
      }
      await present(job, "the run's job").moveToFailed(
        new Error('job stalled more than allowable limit'),
        'taker',
        false,
      );
    } finally {
      await taker.close();
      connection.disconnect();
    }
    expect(await queue.getJobState(id)).toBe('failed');

    expect((await reconciler().runOnce()).lost).not.toContain(id);
    expect(await db.run.findUniqueOrThrow({ where: { id } })).toMatchObject({ status: 'running', attempt: 1 });

    await db.run.update({ where: { id }, data: { heldUntil: new Date(Date.now() - 1_000) } });
    expect((await reconciler().runOnce()).lost).toContain(id);
    expect(await db.run.findUniqueOrThrow({ where: { id } })).toMatchObject({
      status: 'error',
      outcomeCode: 'worker_lost',
    });
  });

  it('purges idempotency records past their 24 hours and keeps live ones', async () => {
    const { workspaceId } = await queuedRuns(1);
    const base = {
      workspaceId,
      requestHash: 'h',
      state: 'completed' as const,
      responseStatus: 201,
      responseBody: {},
      lockedUntil: new Date(),
    };
    await db.idempotencyRecord.createMany({
      data: [
        { ...base, key: 'old', expiresAt: new Date(Date.now() - 1_000) },
        { ...base, key: 'live', expiresAt: new Date(Date.now() + 3_600_000) },
      ],
    });
    const report = await reconciler().runOnce();
    expect(report.purged).toBeGreaterThanOrEqual(1);
    const keys = (await db.idempotencyRecord.findMany({ where: { workspaceId } })).map((r) => r.key);
    expect(keys).toEqual(['live']);
  });

  it('does nothing while another worker holds the reconciler lock', async () => {
    const id = await oneQueuedRun();
    const holder = new Client({ connectionString: process.env.DATABASE_URL });
    await holder.connect();
    try {
      await holder.query('BEGIN');
      await holder.query('SELECT pg_advisory_xact_lock($1)', [RECONCILER_LOCK_KEY.toString()]);
      const blocked = await reconciler().runOnce();
      expect(blocked).toMatchObject({ ran: false, requeued: [] });
      expect(await queue.getJob(id)).toBeUndefined();
      await holder.query('COMMIT');
      const after = await reconciler().runOnce();
      expect(after.ran).toBe(true);
      expect(after.requeued).toContain(id);
    } finally {
      await holder.end();
    }
  });
});
