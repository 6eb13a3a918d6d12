import { Type, type Static } from '@sinclair/typebox';

/**
 * The job catalog: every queue, its payload and its retry policy. Payloads carry ids only; everything
 * else (including secrets) is read from Postgres by the worker.
 */
export const RunJobPayload = Type.Object({ runId: Type.String({ minLength: 1 }) }, { additionalProperties: false });
export type RunJobPayload = Static<typeof RunJobPayload>;

/**
 * A webhook delivery: the outbox message's id and delivery round only (its body, endpoint and secret
 * are read from Postgres).
 */
export const WebhookJobPayload = Type.Object(
  { messageId: Type.String({ minLength: 1 }), round: Type.Integer({ minimum: 1 }) },
  { additionalProperties: false },
);
export type WebhookJobPayload = Static<typeof WebhookJobPayload>;

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
  discovery: {
    queue: 'discovery',
    name: 'discover',
    /**
     * Lists a deployment's Playwright tests (DiscoveryJobPayload in playwright-tests.ts) in a
     * worker's sandbox; the API waits for its answer while the deployment request is open. A lost
     * job costs the request an error, never a stored deployment, so BullMQ does not retry it.
     */
    options: { attempts: 1, removeOnComplete: { age: 600 }, removeOnFail: { age: 600 } },
    /** How long the API waits for an answer before it answers 503 `discovery_unavailable`. */
    waitMs: 120_000,
  },
  webhook: {
    queue: 'webhooks',
    name: 'deliver',
    payload: WebhookJobPayload,
    /**
     * A job's id is `<message id>.<round>` (a redelivery starts a new round), so the relay may add a
     * message again after a crash without sending it twice. Attempts and delays follow the worker's
     * webhook retry schedule (`backoff.type` names its strategy); a job that fails its last attempt,
     * or stalls too often, is removed from Redis: the message's state in Postgres says what happened.
     */
    options: { removeOnComplete: true, removeOnFail: true },
    backoffType: 'webhook',
    maxStalledCount: 3,
  },
} as const;
