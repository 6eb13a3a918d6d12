import type { Db } from '@testrun/core/db';
import { errorMessage, type Logger } from '@testrun/core/logger';
import { renewHolds } from '@testrun/core/runs';
import { foldRepeats } from '../support/repeated-errors';

/**
 * The runs this process is running, and their hold in Postgres (`held_until`): a claim takes a hold
 * of `holdMs` (WORKER_LOCK_DURATION_MS), and every third of it one statement renews the holds of all
 * the runs still here, so a hold outlives two renewals missed by a busy process. While a run's hold
 * is live no other claim takes it over (a job given again by BullMQ's stalled check or by the
 * reconciler after Redis lost it) and it is not ended `worker_lost`: its worker records it as usual.
 * Once the process is gone its holds lapse and the reconciler gives the run a new job
 * (docs/WORKER.md, "At least once, stalls and the reconciler").
 */
export class RunHolds {
  private readonly held = new Map<string, number>();
  private timer: NodeJS.Timeout | null = null;
  private renewing: Promise<void> | null = null;
  private readonly failed: (error: Error) => void;

  constructor(
    private readonly db: Db,
    readonly holdMs: number,
    logger: Logger,
  ) {
    this.failed = foldRepeats((error, folded) =>
      logger.warn('could not renew the holds of running runs', { error: error.message, folded }),
    );
  }

  /** A run claimed here: held until {@link release}d (as often as it was held). */
  hold(runId: string): void {
    this.held.set(runId, (this.held.get(runId) ?? 0) + 1);
  }

  release(runId: string): void {
    const count = (this.held.get(runId) ?? 0) - 1;
    if (count > 0) this.held.set(runId, count);
    else this.held.delete(runId);
  }

  start(): void {
    this.timer ??= setInterval(() => void this.renew(), Math.max(100, Math.floor(this.holdMs / 3)));
    this.timer.unref();
  }

  /** Stops renewing (and waits for a renewal under way); the holds lapse on their own. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.renewing;
  }

  /** One renewal of every hold; skipped while the previous one is still under way. */
  renew(): Promise<void> {
    this.renewing ??= renewHolds(this.db, [...this.held.keys()], this.holdMs)
      .then(() => undefined)
      .catch((error: unknown) => this.failed(error instanceof Error ? error : new Error(errorMessage(error))))
      .finally(() => {
        this.renewing = null;
      });
    return this.renewing;
  }
}
