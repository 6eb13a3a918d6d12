import { Queue, QueueEvents } from 'bullmq';
import { Redis, type RedisOptions } from 'ioredis';
import { JOBS, type DiscoveryJobPayload, type DiscoveryResult, type RunJobPayload } from '@testrun/contracts';

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

/** Asks a worker to list a bundle's Playwright tests in its sandbox, and waits for the answer. */
export type Discover = (payload: DiscoveryJobPayload) => Promise<DiscoveryResult>;

/** Why discovery could not answer: no worker took the job within the wait, or (`failed`) the job failed. */
export class DiscoveryUnavailableError extends Error {
  constructor(
    message: string,
    readonly failed = false,
  ) {
    super(message);
  }
}

/**
 * The API's side of discovery: a job on the discovery queue, and the wait for its answer through
 * BullMQ's queue events (a connection of their own, made here: they block). `close()` ends both.
 */
export function createDiscoveryClient(
  connect: () => Redis,
  prefix: string,
  waitMs: number = JOBS.discovery.waitMs,
): { discover: Discover; close(): Promise<void> } {
  // BullMQ leaves a connection it is given open when it closes: both are closed here.
  const connection = connect();
  const connections = [connection];
  const queue = new Queue<DiscoveryJobPayload>(JOBS.discovery.queue, { connection, prefix });
  let events: QueueEvents | undefined;
  return {
    async discover(payload) {
      if (!events) {
        const listening = connect();
        connections.push(listening);
        events = new QueueEvents(JOBS.discovery.queue, { connection: listening, prefix });
      }
      await events.waitUntilReady();
      const job = await queue.add(JOBS.discovery.name, payload, JOBS.discovery.options);
      try {
        return (await job.waitUntilFinished(events, waitMs)) as DiscoveryResult;
      } catch (error) {
        // Failed, or not taken in time: nobody will want its answer.
        const failed = (await job.getState().catch(() => 'unknown')) === 'failed';
        await job.remove().catch(() => undefined);
        throw new DiscoveryUnavailableError(error instanceof Error ? error.message : String(error), failed);
      }
    },
    async close() {
      await Promise.allSettled([queue.close(), events?.close()]);
      for (const connection of connections) connection.disconnect();
    },
  };
}
