import type { Queue } from 'bullmq';
import { JOBS, type WebhookJobPayload } from '@testrun/contracts';
import type { Db } from '@testrun/core/db';
import { errorMessage, type Logger } from '@testrun/core/logger';
import { webhookPositions } from '@testrun/core/webhooks';
import { foldRepeats } from '../support/repeated-errors';
import type { webhookJobOptions } from './webhook-worker';

/** Options of {@link WebhookRelay}. */
export interface WebhookRelayOptions {
  db: Db;
  queue: Queue<WebhookJobPayload>;
  logger: Logger;
  /** The options every job is added with (attempts and backoff of the retry schedule). */
  jobOptions: ReturnType<typeof webhookJobOptions>;
  /** WEBHOOK_RELAY_INTERVAL_MS: how often new outbox rows are handed to the queue (default 1000). */
  intervalMs: number;
  /**
   * WEBHOOK_SWEEP_INTERVAL_MS: how often every pending message is handed to the queue again, for
   * jobs Redis lost or that stalled out (default 60000). Adding a job that exists is a no-op.
   */
  sweepIntervalMs: number;
}

/** Messages handed to the queue per statement. */
const BATCH = 500;

type Pending = { id: string; round: number };

/**
 * Moves the outbox to the webhook queue. A row is added with job id `<message id>.<round>` and then
 * marked as queued for that round; a relay that dies in between adds it again, which BullMQ ignores.
 * Every worker process runs one; they never send a message twice for the same reason.
 */
export class WebhookRelay {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private lastSweep = 0;
  /** While Postgres or Redis is down every pass fails the same way: one line per message and period. */
  private readonly warn = foldRepeats((error, folded) =>
    this.options.logger.warn('webhook relay pass failed; it runs again', { error: error.message, folded }),
  );

  constructor(private readonly options: WebhookRelayOptions) {}

  start(): void {
    const tick = () => {
      this.running = this.pass()
        .then(() => undefined)
        .catch((error: unknown) => this.warn(error instanceof Error ? error : new Error(errorMessage(error))))
        .finally(() => {
          this.running = null;
          if (this.timer) this.timer = setTimeout(tick, this.options.intervalMs);
        });
    };
    this.timer = setTimeout(tick, 0);
  }

  async stop(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.running;
  }

  /** One pass: every new message, and on each sweep every pending one. Returns how many were handed over. */
  async pass(now = Date.now()): Promise<number> {
    const { db } = this.options;
    let handed = 0;
    for (;;) {
      const fresh = await db.$queryRaw<Pending[]>`
        SELECT id, round FROM webhook_messages
        WHERE state = 'pending' AND queued_round IS DISTINCT FROM round ORDER BY created_at LIMIT ${BATCH}`;
      if (fresh.length === 0) break;
      await this.hand(fresh);
      await db.$executeRaw`
        UPDATE webhook_messages m SET queued_round = x.round
        FROM unnest(${fresh.map((p) => p.id)}::text[], ${fresh.map((p) => p.round)}::int[]) AS x(id, round)
        WHERE m.id = x.id AND m.round = x.round`;
      handed += fresh.length;
      if (fresh.length < BATCH) break;
    }
    if (now - this.lastSweep >= this.options.sweepIntervalMs) {
      this.lastSweep = now;
      let after = '';
      for (;;) {
        const pending = await db.$queryRaw<Pending[]>`
          SELECT id, round FROM webhook_messages
          WHERE state = 'pending' AND queued_round = round AND id > ${after} ORDER BY id LIMIT ${BATCH}`;
        if (pending.length === 0) break;
        await this.hand(pending);
        after = pending[pending.length - 1]?.id ?? after;
        if (pending.length < BATCH) break;
      }
    }
    return handed;
  }

  /** Adds the messages' jobs, each with its place in its workspace's line as its priority. */
  private async hand(messages: readonly Pending[]): Promise<void> {
    const positions = await webhookPositions(
      this.options.db,
      messages.map((m) => m.id),
    );
    await this.options.queue.addBulk(
      messages.map(({ id, round }) => ({
        name: JOBS.webhook.name,
        data: { messageId: id, round },
        opts: { jobId: `${id}.${round}`, ...this.options.jobOptions, priority: positions.get(id) ?? 1 },
      })),
    );
  }
}
