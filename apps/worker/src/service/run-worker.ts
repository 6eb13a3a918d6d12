import { DelayedError, UnrecoverableError, Worker, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import { compileValidator, JOBS, RunJobPayload } from '@testrun/contracts';
import { errorMessage, type Logger } from '@testrun/core/logger';
import { abortRun } from '@testrun/core/runs';
import { executeRun } from '../run/execute-run';
import type { RunDeps, RunExecution } from '../run/run-deps';
import { foldRepeats } from '../support/repeated-errors';
import { isWorkerLost, notRecordedError, workerLostOutcome } from '../run/run-outcomes';

/** How long the job of a run waiting for another test of its Playwright file is put off (claim.ts, `waiting`). */
const GROUP_WAIT_MS = 1_000;

/** Options of {@link createRunWorker}. */
export interface RunWorkerOptions {
  /** A Redis connection made with `maxRetriesPerRequest: null` (core's `createRedis`). */
  connection: Redis;
  /** BullMQ key prefix, the deployment's `REDIS_PREFIX` (default deployment prefix `testrun`). */
  prefix: string;
  /** Runs at once in this process (WORKER_CONCURRENCY, default 2). */
  concurrency?: number;
  /** Job lock lifetime, renewed every half of it (WORKER_LOCK_DURATION_MS, default 30000). */
  lockDurationMs?: number;
  /** How often to look for jobs whose worker died (WORKER_STALLED_INTERVAL_MS, default 30000). */
  stalledIntervalMs?: number;
  /** Called after every run, for benchmarks and tests. Default none. */
  onRunDone?: (runId: string, execution: RunExecution) => void;
}

const parsePayload = compileValidator(RunJobPayload);

/**
 * The job's run, executed; it is no longer on its way to a batch (if it had not arrived yet). executeRun
 * throws only when the run could not be recorded: the job fails saying why, and the reconciler ends
 * the run with that reason (never `worker_lost`: this worker is alive).
 */
async function executeJobRun(deps: RunDeps, runId: string): Promise<RunExecution> {
  try {
    return await executeRun(deps, runId);
  } catch (error) {
    throw notRecordedError(error);
  } finally {
    deps.jobs?.executed(runId);
  }
}

/**
 * The run queue's consumer: a thin processor that checks the payload and calls executeRun. Any
 * number of these, in any number of processes, share the queue.
 */
export function createRunWorker(deps: RunDeps, options: RunWorkerOptions): Worker {
  const logger: Logger = deps.logger;
  const worker = new Worker<unknown>(
    JOBS.run.queue,
    async (job: Job<unknown>, token?: string) => {
      const payload = parsePayload(job.data);
      if (!payload.ok) {
        // Nothing to run and nothing to retry: the payload did not come from our producer.
        throw new UnrecoverableError(
          `invalid run job payload: ${payload.errors.map((e) => `${e.path} ${e.message}`).join('; ')}`,
        );
      }
      // An executor that waits for runs on their way (a Playwright batch's leader) sees which of this
      // worker's slots hold a job, and which runs are on their way (RunDeps.jobs).
      const { runId } = payload.value;
      deps.jobs?.took(runId);
      try {
        const execution = await executeJobRun(deps, runId);
        // Work this run's executor held the job for (a batch it leads) keeps the worker's slot until it has ended.
        if (execution.kind === 'finished') await execution.held;
        // Another test of its file runs elsewhere: the job comes back once that one's batch has
        // taken this run, or it has ended; the slot meanwhile takes other work.
        if (execution.kind === 'not_runnable' && execution.reason === 'waiting' && token !== undefined) {
          await job.moveToDelayed(Date.now() + GROUP_WAIT_MS, token);
          throw new DelayedError();
        }
        options.onRunDone?.(payload.value.runId, execution);
        return execution.kind === 'finished'
          ? { status: execution.status, attempt: execution.attempt }
          : { skipped: execution.reason };
      } finally {
        deps.jobs?.freed();
      }
    },
    {
      connection: options.connection,
      prefix: options.prefix,
      concurrency: options.concurrency ?? 2,
      maxStalledCount: JOBS.run.maxStalledCount,
      lockDuration: options.lockDurationMs ?? 30_000,
      stalledInterval: options.stalledIntervalMs ?? 30_000,
    },
  );
  worker.on('failed', (job, error) => {
    if (!job) return;
    const payload = parsePayload(job.data);
    const runId = payload.ok ? payload.value.runId : job.id;
    if (!runId) return;
    if (isWorkerLost(error.message)) {
      // Its worker died on every allowed attempt: the run ends here, counted once; unless a live
      // worker still holds it (BullMQ misjudged a busy one), which records it, or the reconciler
      // ends it once the hold lapses.
      void deps.db.run
        .findUnique({ where: { id: runId }, select: { attempt: true } })
        .then((run) => abortRun(deps.db, runId, workerLostOutcome(run?.attempt ?? 0), { unlessHeld: true }))
        .then((ended) => ended && logger.warn('run ended: its worker was lost', { runId }))
        .catch((error: unknown) =>
          logger.error('could not end a run whose worker was lost; the reconciler will', {
            runId,
            error: errorMessage(error),
          }),
        );
    } else {
      logger.error('run job failed; the reconciler will settle the run', { runId, error: error.message });
    }
  });
  worker.on('stalled', (jobId) =>
    logger.warn('run handed to another attempt: its worker stopped renewing the lock', { runId: jobId }),
  );
  // While Redis is down this fires on every reconnect attempt: one line per message and period.
  worker.on(
    'error',
    foldRepeats((error, folded) => logger.error('run worker error', { error: error.message, folded })),
  );
  return worker;
}
