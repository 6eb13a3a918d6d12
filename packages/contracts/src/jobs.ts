import { Type, type Static } from '@sinclair/typebox';

/**
 * The job catalog: every queue, its payload and its retry policy. Payloads carry ids only; everything
 * else (including secrets) is read from Postgres by the worker.
 */
export const RunJobPayload = Type.Object({ runId: Type.String({ minLength: 1 }) }, { additionalProperties: false });
export type RunJobPayload = Static<typeof RunJobPayload>;

export const JOBS = {
  run: {
    queue: 'runs',
    name: 'run',
    payload: RunJobPayload,
    /**
     * A job's id is the run's id, so a job is never added twice for one run. Outcomes are recorded by
     * the worker itself, so BullMQ does not retry a job that returned or threw; a job whose worker
     * died is recovered by stall detection once (`maxStalledCount` on the worker), then the run
     * ends `error`/`worker_lost`.
     */
    options: { attempts: 1, removeOnComplete: true, removeOnFail: { age: 24 * 3600 } },
    maxStalledCount: 1,
  },
} as const;
