import { DelayedError, UnrecoverableError, Worker, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import { Webhook } from 'standardwebhooks';
import { compileValidator, isWebhookEvent, JOBS, WebhookJobPayload } from '@testrun/contracts';
import type { Db } from '@testrun/core/db';
import { errorMessage, type Logger } from '@testrun/core/logger';
import type { DerivedKeys } from '@testrun/core/secrets';
import type { LookupAll, TargetPolicy } from '@testrun/core/target-policy';
import type { ViewLinkConfig } from '@testrun/core/view-links';
import { buildWebhookBody, openWebhookSecret } from '@testrun/core/webhooks';
import { runPolicy } from '../network/run-target';
import { foldRepeats } from '../support/repeated-errors';
import { webhookRetryDelays, type WebhookRetryPolicy } from './retry-schedule';
import { DeliverySlots, type SlotKey } from './delivery-slots';
import { sendWebhook, type WebhookResponse } from './send-webhook';

/** What an attempt came to, for the metrics: delivered, failed with a retry to come, or failed for good. */
export type WebhookAttemptOutcome = 'delivered' | 'retry' | 'failed';

/** What the webhook worker delivers with. */
export interface WebhookDeps {
  db: Db;
  keys: DerivedKeys;
  links: ViewLinkConfig;
  /** The deployment's target policy (each delivery narrows it by the workspace's denied targets). */
  policy: TargetPolicy;
  lookup: LookupAll;
  logger: Logger;
  /** WEBHOOK_TIMEOUT_MS: the longest one attempt may take (default 10000). */
  timeoutMs: number;
  retry: WebhookRetryPolicy;
  onAttempt?: (outcome: WebhookAttemptOutcome) => void;
}

/** Options of {@link createWebhookWorker}. */
export interface WebhookWorkerOptions {
  connection: Redis;
  prefix: string;
  /** WEBHOOK_CONCURRENCY: deliveries at once in this process (default 16). */
  concurrency: number;
  /** WEBHOOK_WORKSPACE_CONCURRENCY: deliveries of one workspace at once in this process. */
  workspaceConcurrency: number;
  /** WEBHOOK_ENDPOINT_CONCURRENCY: deliveries to one endpoint at once in this process (1 while it times out). */
  endpointConcurrency: number;
  /** As the run worker's (WORKER_LOCK_DURATION_MS, WORKER_STALLED_INTERVAL_MS). */
  lockDurationMs: number;
  stalledIntervalMs: number;
}

const parsePayload = compileValidator(WebhookJobPayload);

type MessageRow = {
  id: string;
  endpoint_id: string;
  workspace_id: string;
  event: string;
  resource_id: string;
  body: string | null;
  state: string;
  round: number;
  url: string;
  secret_sealed: Uint8Array;
};

/** Thrown to have BullMQ retry the job after the schedule's next wait. */
class AttemptFailed extends Error {
  override name = 'AttemptFailed';
}

/** A message with its endpoint's URL and sealed secret, or undefined when it is gone. */
async function readMessage(db: Db, messageId: string): Promise<MessageRow | undefined> {
  const rows = await db.$queryRaw<MessageRow[]>`
    SELECT m.id, m.endpoint_id, m.workspace_id, m.event, m.resource_id, m.body, m.state, m.round, e.url, e.secret_sealed
    FROM webhook_messages m JOIN webhook_endpoints e ON e.id = m.endpoint_id WHERE m.id = ${messageId}`;
  return rows[0];
}

/**
 * One attempt at a message: builds its body at the first attempt (kept, so every retry sends the
 * same bytes under the same `webhook-id`), signs it with the endpoint's current secret and a fresh
 * timestamp, POSTs it, and logs the attempt. Returns the answer, or null when nothing was sent.
 */
async function deliver(
  deps: WebhookDeps,
  message: MessageRow,
  round: number,
  lastAttempt: boolean,
): Promise<WebhookResponse | null> {
  const { db } = deps;
  const messageId = message.id;
  if (!isWebhookEvent(message.event)) throw new UnrecoverableError(`unknown webhook event ${message.event}`);
  const built =
    message.body ??
    (await buildWebhookBody(db, deps.keys, deps.links, {
      event: message.event,
      workspaceId: message.workspace_id,
      resourceId: message.resource_id,
    }));
  if (built === null) {
    await db.$executeRaw`UPDATE webhook_messages SET state = 'failed' WHERE id = ${messageId} AND round = ${round}`;
    deps.logger.warn('webhook message dropped: its run or suite run no longer exists', { messageId });
    return null;
  }
  const claimed = await db.$queryRaw<Array<{ attempts: number; body: string }>>`
    UPDATE webhook_messages SET attempts = attempts + 1, last_attempt_at = now(), body = COALESCE(body, ${built})
    WHERE id = ${messageId} AND state = 'pending' AND round = ${round} RETURNING attempts, body`;
  const attempt = claimed[0];
  if (!attempt) return null;
  const secret = openWebhookSecret(deps.keys.headers, message.endpoint_id, message.secret_sealed);
  const now = new Date();
  const headers = {
    'webhook-id': messageId,
    'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
    'webhook-signature': new Webhook(secret).sign(messageId, now, attempt.body),
  };
  const response = await sendWebhook({
    url: message.url,
    headers,
    body: attempt.body,
    policy: await runPolicy(db, deps.policy, message.workspace_id),
    lookup: deps.lookup,
    timeoutMs: deps.timeoutMs,
  });
  const state = response.ok ? 'delivered' : lastAttempt ? 'failed' : 'pending';
  await db.$executeRaw`
    WITH a AS (
      INSERT INTO webhook_attempts (message_id, attempt, endpoint_id, response_status, error, duration_ms)
      VALUES (${messageId}, ${attempt.attempts}, ${message.endpoint_id}, ${response.status}, ${response.error}, ${response.durationMs})
      ON CONFLICT DO NOTHING)
    UPDATE webhook_messages SET state = ${state}, delivered_at = CASE WHEN ${state} = 'delivered' THEN now() END
    WHERE id = ${messageId} AND round = ${round} AND state = 'pending'`;
  const outcome = response.ok ? 'delivered' : lastAttempt ? 'failed' : 'retry';
  deps.onAttempt?.(outcome);
  const fields = {
    messageId,
    endpointId: message.endpoint_id,
    event: message.event,
    attempt: attempt.attempts,
    status: response.status,
    durationMs: response.durationMs,
  };
  if (response.ok) deps.logger.info('webhook delivered', fields);
  else if (lastAttempt)
    deps.logger.warn('webhook failed for good: no attempt left', { ...fields, error: response.error });
  else deps.logger.info('webhook attempt failed; it will be retried', { ...fields, error: response.error });
  return response;
}

/**
 * Sends a message in a slot of its workspace and endpoint (see {@link DeliverySlots}). Without room
 * the job goes back to the queue, delayed by the attempt timeout (by then a slot of its workspace
 * has freed in this process or another) without spending an attempt, and the next slot its
 * workspace frees here takes it back at once. Throws {@link AttemptFailed} when the attempt failed
 * and another is due.
 */
async function deliverInSlot(
  deps: WebhookDeps,
  slots: DeliverySlots<Job<unknown>>,
  job: Job<unknown>,
  token: string | undefined,
  request: { messageId: string; round: number; lastAttempt: boolean },
): Promise<void> {
  const message = await readMessage(deps.db, request.messageId);
  // Removed with its endpoint, delivered already, or redelivered in a newer round: nothing to do.
  if (!message || message.state !== 'pending' || message.round !== request.round) return;
  const key: SlotKey = { workspaceId: message.workspace_id, endpointId: message.endpoint_id };
  const wakeNext = () =>
    slots
      .wake(key.workspaceId)
      ?.promote()
      .catch((error: unknown) =>
        deps.logger.debug('a deferred webhook job had left the delay', { error: errorMessage(error) }),
      );
  if (!slots.take(key)) {
    const until = Date.now() + deps.timeoutMs;
    await job.moveToDelayed(until, token);
    slots.defer(key, job, until);
    // A slot freed while the job was being put back found nothing to wake: take it now.
    void wakeNext();
    throw new DelayedError();
  }
  let response: WebhookResponse | null = null;
  try {
    response = await deliver(deps, message, request.round, request.lastAttempt);
  } finally {
    slots.release(key, response?.timedOut ?? false);
    void wakeNext();
  }
  if (response && !response.ok && !request.lastAttempt) throw new AttemptFailed(response.error ?? 'failed');
}

/** The number of attempts a message gets in one round, and the job options the relay adds it with. */
export function webhookJobOptions(retry: WebhookRetryPolicy) {
  return {
    ...JOBS.webhook.options,
    attempts: webhookRetryDelays(retry).length + 1,
    backoff: { type: JOBS.webhook.backoffType },
  };
}

/**
 * The webhook queue's consumer. Waits between attempts follow the retry schedule (a custom BullMQ
 * backoff strategy); the attempt number comes from the job, the message's state from Postgres.
 */
export function createWebhookWorker(deps: WebhookDeps, options: WebhookWorkerOptions): Worker {
  const delays = webhookRetryDelays(deps.retry);
  const slots = new DeliverySlots<Job<unknown>>({
    workspace: options.workspaceConcurrency,
    endpoint: options.endpointConcurrency,
  });
  const worker = new Worker<unknown>(
    JOBS.webhook.queue,
    async (job: Job<unknown>, token?: string) => {
      const payload = parsePayload(job.data);
      if (!payload.ok) throw new UnrecoverableError('invalid webhook job payload');
      const lastAttempt = job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
      await deliverInSlot(deps, slots, job, token, { ...payload.value, lastAttempt });
    },
    {
      connection: options.connection,
      prefix: options.prefix,
      concurrency: options.concurrency,
      maxStalledCount: JOBS.webhook.maxStalledCount,
      lockDuration: options.lockDurationMs,
      stalledInterval: options.stalledIntervalMs,
      settings: {
        backoffStrategy: (attemptsMade: number) => delays[Math.min(attemptsMade, delays.length) - 1] ?? 0,
      },
    },
  );
  worker.on('failed', (job, error) => {
    if (error instanceof AttemptFailed || error.name === 'AttemptFailed') return;
    deps.logger.error('webhook job failed; the relay will hand the message to the queue again', {
      jobId: job?.id,
      error: error.message,
    });
  });
  worker.on(
    'error',
    foldRepeats((error, folded) => deps.logger.error('webhook worker error', { error: error.message, folded })),
  );
  return worker;
}
