import { Queue } from 'bullmq';
import { Redis, type RedisOptions } from 'ioredis';
import { JOBS, type RunJobPayload } from '@testrun/contracts';

/** A Redis connection fit for BullMQ (workers block, so no per-request retry limit). */
export function createRedis(url: string, options: RedisOptions = {}): Redis {
  return new Redis(url, { maxRetriesPerRequest: null, enableOfflineQueue: true, ...options });
}

export type RunQueue = Queue<RunJobPayload>;

/** The run queue. `prefix` namespaces every BullMQ key (default deployment prefix `testrun`). */
export function createRunQueue(connection: Redis, prefix: string): RunQueue {
  return new Queue<RunJobPayload>(JOBS.run.queue, { connection, prefix });
}

/**
 * Jobs per Redis pipeline. The API's queue shares one connection with every other request's Redis
 * commands (rate limits, other workspaces' jobs), which Redis answers in order: a large request
 * adds its jobs in pipelines of this many, so another request's command waits for one of them at
 * most, and the event loop is not held for the whole batch either.
 */
const JOBS_PER_PIPELINE = 500;

/**
 * Adds one job per run: job id = run id, payload = the id only. Adding an existing id is a no-op.
 * `positions` (core's fairPositions) become the jobs' priorities, which share the workers fairly
 * among workspaces; a run without one is served first.
 */
export async function addRunJobs(
  queue: RunQueue,
  runIds: readonly string[],
  positions: ReadonlyMap<string, number> = new Map(),
): Promise<void> {
  for (let from = 0; from < runIds.length; from += JOBS_PER_PIPELINE) {
    await queue.addBulk(
      runIds.slice(from, from + JOBS_PER_PIPELINE).map((runId) => {
        const priority = positions.get(runId);
        return {
          name: JOBS.run.name,
          data: { runId },
          opts: { jobId: runId, ...JOBS.run.options, ...(priority === undefined ? {} : { priority }) },
        };
      }),
    );
  }
}
