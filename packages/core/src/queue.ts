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
 * Adds one job per run: job id = run id, payload = the id only. Adding an existing id is a no-op.
 * `positions` (core's fairPositions) become the jobs' priorities, which share the workers fairly
 * among workspaces; a run without one is served first.
 */
export async function addRunJobs(
  queue: RunQueue,
  runIds: readonly string[],
  positions: ReadonlyMap<string, number> = new Map(),
): Promise<void> {
  if (runIds.length === 0) return;
  await queue.addBulk(
    runIds.map((runId) => {
      const priority = positions.get(runId);
      return {
        name: JOBS.run.name,
        data: { runId },
        opts: { jobId: runId, ...JOBS.run.options, ...(priority === undefined ? {} : { priority }) },
      };
    }),
  );
}
