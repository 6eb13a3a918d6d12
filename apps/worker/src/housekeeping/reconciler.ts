import { formatDuration } from '@testrun/contracts';
import type { ArtifactStore } from '@testrun/core/artifact-store';
import { Prisma, type Db } from '@testrun/core/db';
import { errorMessage, type Logger } from '@testrun/core/logger';
import { addRunJobs, type RunQueue } from '@testrun/core/queue';
import {
  abortRun,
  CANCELLED_RUNNING_OUTCOME,
  fairPositions,
  HOLD_LIVE,
  IS_PLAYWRIGHT_RUN,
  PLAYWRIGHT_TIME,
} from '@testrun/core/runs';
import { purgeExpired, type RetentionDays, type RetentionReport } from './retention';
import { failedJobOutcome, isWorkerLost } from '../run/run-outcomes';

/** Options of {@link Reconciler}. */
export interface ReconcilerOptions {
  db: Db;
  queue: RunQueue;
  logger: Logger;
  /** Time between passes (RECONCILE_INTERVAL_MS, default 5000). */
  intervalMs?: number;
  /** How long past its deadline a running run may go before it is ended `timeout` (RECONCILE_DEADLINE_GRACE_MS, default 30000). */
  deadlineGraceMs?: number;
  /** A queued run younger than this is left to the API, which is adding its job right now. Default 2000 ms. */
  queuedGraceMs?: number;
  /** Most runs of each kind looked at per pass. Default 1000. */
  batchSize?: number;
  /**
   * Where expired runs' files are deleted from, and the default retention: with both, each pass
   * ends with a purge of what expired (retention.ts). Without them nothing is purged.
   */
  retention?: { store: ArtifactStore; defaults: RetentionDays };
  /** How long a running run's worker has to honour a cancel before the reconciler ends the run. Default 5000 ms. */
  cancelGraceMs?: number;
  /** Told what each scheduled pass did (the worker's metrics). Default nobody. */
  onPass?: (report: ReconcileReport) => void;
}

/** What one pass did; returned for tests and logs. */
export type ReconcileReport = {
  /** False when another worker held the lock, so this one did nothing. */
  ran: boolean;
  requeued: string[];
  timedOut: string[];
  /** Running runs whose job failed, ended: `worker_lost`, or what kept their worker from recording them. */
  lost: string[];
  /** Idempotency records past their 24 hours, deleted. */
  purged: number;
  /** What retention deleted in this pass, when it is configured. */
  expired?: RetentionReport;
  /** Running runs whose cancel their worker did not honour in time, ended `cancelled`. */
  cancelled?: string[];
  /** Suite runs whose sealed copy of headers and variables passed its time, erased. */
  erasedCopies?: number;
};

/** A run no live Playwright batch holds: a held run's job is the batch's business (docs/PLAYWRIGHT.md, "Batches"). */
const NOT_IN_LIVE_BATCH = Prisma.sql`(batch_lease_until IS NULL OR batch_lease_until < now())`;

/** Key of the Postgres advisory lock that lets one worker at a time reconcile ("tr-recon" in ASCII). */
export const RECONCILER_LOCK_KEY = 0x74722d7265636f6en;

/**
 * Keeps Postgres and the queue in agreement, so that no run is lost and none stays non-terminal:
 * - a `queued` run with no live job (Redis restarted or flushed, the API's add failed) gets its job
 *   added again (same job id, so a job that exists is left alone);
 * (runs a live Playwright batch holds are left to it: their jobs were taken by the batch)
 * - a `running` run whose job is gone gets it added again once its worker's hold has lapsed (a live
 *   worker renews the hold of the runs it runs, run/run-holds.ts, and records them itself): the next
 *   worker's `startRun` makes it the next attempt, or ends it `worker_lost` when no attempt is left;
 * - a `running` run whose job failed ends `worker_lost` when its worker was lost too often (once its
 *   hold has lapsed), else
 *   `internal_error` saying what kept its worker from recording it (the database was unavailable);
 * - a `running` run past its deadline plus the grace period ends `timeout`, whatever its job says;
 * - idempotency records past their 24 hours are deleted;
 * - runs and artifacts past their retention are deleted, a bounded amount per pass (retention.ts),
 *   and then baseline history past it and baseline images no row refers to any more;
 * - a `running` run whose cancel was asked more than `cancelGraceMs` ago ends `cancelled` (its
 *   worker missed the message, or is gone);
 * - suite runs' sealed copies of headers and variables past `sealed_until` are erased.
 * Every worker process runs one; a transaction-scoped advisory lock lets only one pass run at a time.
 */
export class Reconciler {
  private timer: NodeJS.Timeout | null = null;
  private current: Promise<unknown> | null = null;
  private stopped = false;
  private readonly intervalMs: number;
  private readonly deadlineGraceMs: number;
  private readonly queuedGraceMs: number;
  private readonly batchSize: number;
  private readonly cancelGraceMs: number;

  constructor(private readonly options: ReconcilerOptions) {
    this.intervalMs = options.intervalMs ?? 5_000;
    this.deadlineGraceMs = options.deadlineGraceMs ?? 30_000;
    this.queuedGraceMs = options.queuedGraceMs ?? 2_000;
    this.batchSize = options.batchSize ?? 1_000;
    this.cancelGraceMs = options.cancelGraceMs ?? 5_000;
  }

  start(): void {
    this.stopped = false;
    this.schedule();
  }

  /** Stops the timer and waits for a pass under way. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    await this.current?.catch(() => undefined);
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.current = this.runOnce()
        .then((report) => this.options.onPass?.(report))
        .catch((error: unknown) => this.options.logger.error('reconciler pass failed', { error: errorMessage(error) }))
        .finally(() => {
          this.current = null;
          this.schedule();
        });
    }, this.intervalMs);
    this.timer.unref();
  }

  /** One pass; does nothing (ran: false) when another worker holds the lock. */
  async runOnce(): Promise<ReconcileReport> {
    const { db } = this.options;
    return db.$transaction(
      async (tx) => {
        const [lock] = await tx.$queryRaw<
          Array<{ locked: boolean }>
        >`SELECT pg_try_advisory_xact_lock(${RECONCILER_LOCK_KEY}) AS locked`;
        if (!lock?.locked) return { ran: false, requeued: [], timedOut: [], lost: [], purged: 0 };
        const timedOut = await this.endOverdueRuns();
        const { requeued, lost } = await this.settleJobs();
        const purged = await this.purgeIdempotencyRecords();
        const cancelled = await this.endCancelledRuns();
        const erasedCopies = await this.eraseSealedCopies();
        const { retention } = this.options;
        const expired = retention ? await purgeExpired({ db, ...retention }) : undefined;
        const report = { ran: true, requeued, timedOut, lost, purged, cancelled, erasedCopies, expired };
        if (requeued.length || timedOut.length || lost.length) {
          this.options.logger.warn('reconciler settled runs', {
            requeued: requeued.length,
            timedOut: timedOut.length,
            lost: lost.length,
          });
        }
        return report;
      },
      { timeout: Math.max(30_000, this.intervalMs * 4), maxWait: 10_000 },
    );
  }

  private async endCancelledRuns(): Promise<string[]> {
    const { db } = this.options;
    const asked = await db.$queryRaw<Array<{ id: string }>>`
      SELECT id FROM runs
      WHERE status = 'running' AND cancel_requested_at < now() - make_interval(secs => ${this.cancelGraceMs / 1000})
      ORDER BY cancel_requested_at LIMIT ${this.batchSize}`;
    const ended: string[] = [];
    for (const run of asked) {
      if (await abortRun(db, run.id, CANCELLED_RUNNING_OUTCOME)) ended.push(run.id);
    }
    if (ended.length > 0) this.options.logger.warn('reconciler ended cancelled runs', { runIds: ended });
    return ended;
  }

  /** A rerun after this must be given the headers and variables again (docs/API.md). */
  private async eraseSealedCopies(): Promise<number> {
    return this.options.db.$executeRaw`
      UPDATE suite_runs SET headers_sealed = NULL, variables_sealed = NULL, sealed_until = NULL
      WHERE id IN (SELECT id FROM suite_runs WHERE sealed_until < now() ORDER BY sealed_until LIMIT ${this.batchSize})`;
  }

  /** Expired records are already ignored by the API; this keeps the table from growing for ever. */
  private async purgeIdempotencyRecords(): Promise<number> {
    return this.options.db.$executeRaw`
      DELETE FROM idempotency_records WHERE (workspace_id, key) IN (
        SELECT workspace_id, key FROM idempotency_records WHERE expires_at < now() ORDER BY expires_at LIMIT ${this.batchSize})`;
  }

  private async endOverdueRuns(): Promise<string[]> {
    const { db } = this.options;
    const overdue = await db.$queryRaw<Array<{ id: string; timeout_ms: number; playwright: boolean }>>`
      SELECT r.id, r.timeout_ms, ${Prisma.raw(IS_PLAYWRIGHT_RUN)} AS playwright FROM runs r
      WHERE r.status = 'running' AND r.deadline_at < now() - make_interval(secs => ${this.deadlineGraceMs / 1000})
      ORDER BY r.deadline_at LIMIT ${this.batchSize}`;
    const ended: string[] = [];
    for (const run of overdue) {
      const done = await abortRun(db, run.id, this.overdueOutcome(run));
      if (done) ended.push(run.id);
    }
    return ended;
  }

  /** A step test ran out of its time budget; a Playwright test (whose time is Playwright's) outlasted the safety net. */
  private overdueOutcome(run: { timeout_ms: number; playwright: boolean }) {
    const grace = formatDuration(this.deadlineGraceMs);
    if (run.playwright) {
      const net = formatDuration(PLAYWRIGHT_TIME.deadlineMs);
      return {
        code: 'timeout' as const,
        message: `the Playwright test was still running ${net} after it began (the service's safety net, far behind Playwright's own timeouts) and its worker did not report an outcome within ${grace} after that`,
        resultSummary: `Error: still running after ${net}, the service's limit for a Playwright test (the worker did not report back).`,
      };
    }
    const budget = formatDuration(run.timeout_ms);
    return {
      code: 'timeout' as const,
      message: `the test's time budget of ${budget} ran out and its worker did not report an outcome within ${grace} after it`,
      resultSummary: `Error: time budget of ${budget} exceeded (the worker did not report back).`,
    };
  }

  private async settleJobs(): Promise<{ requeued: string[]; lost: string[] }> {
    const { db, queue } = this.options;
    const candidates = await db.$queryRaw<
      Array<{ id: string; status: 'queued' | 'running'; attempt: number; held: boolean }>
    >`
      (SELECT id, status::text AS status, attempt, false AS held FROM runs
        WHERE status = 'queued' AND created_at < now() - make_interval(secs => ${this.queuedGraceMs / 1000})
          AND ${NOT_IN_LIVE_BATCH}
        ORDER BY created_at LIMIT ${this.batchSize})
      UNION ALL
      (SELECT id, status::text AS status, attempt, ${Prisma.raw(HOLD_LIVE)} AS held FROM runs
        WHERE status = 'running' AND started_at < now() - make_interval(secs => ${this.queuedGraceMs / 1000})
          AND ${NOT_IN_LIVE_BATCH}
        ORDER BY started_at LIMIT ${this.batchSize})`;
    const requeued: string[] = [];
    const lost: string[] = [];
    for (const run of candidates) {
      const state = await queue.getJobState(run.id);
      if (state === 'unknown' || state === 'completed') {
        // Its job is gone but its worker still runs it (it renews the run's hold): that worker records it.
        if (run.held) continue;
        if (state === 'completed') await queue.remove(run.id).catch(() => undefined);
        requeued.push(run.id);
      } else if (state === 'failed') {
        if (run.status === 'queued') {
          // Failed before it could start (Postgres was down, say): give it a fresh job.
          await queue.remove(run.id).catch(() => undefined);
          requeued.push(run.id);
        } else {
          // Lost only when BullMQ found its worker gone; a worker that gave up recording it says why.
          // A live worker's hold keeps a run it still runs from ending worker_lost (abortRun's unlessHeld).
          const failedReason = (await queue.getJob(run.id))?.failedReason;
          const done = await abortRun(db, run.id, failedJobOutcome(failedReason, run.attempt), {
            unlessHeld: isWorkerLost(failedReason),
          });
          if (done) lost.push(run.id);
        }
      }
      // waiting, delayed, prioritized, active: a worker has it or will.
    }
    // A run read as open above may have finished before its job state was read: its worker writes
    // the outcome to Postgres first, then completes (and so removes) the job. Reading the runs
    // again after the job states keeps only those still open, so a finished run never gets a job.
    const stillOpen = await openRuns(db, requeued);
    const toAdd = requeued.filter((id) => stillOpen.has(id));
    await addRunJobs(queue, toAdd, await fairPositions(db, toAdd));
    return { requeued: toAdd, lost };
  }
}

/** Which of `ids` are still queued or running. */
async function openRuns(db: Db, ids: readonly string[]): Promise<Set<string>> {
  if (ids.length === 0) return new Set();
  const rows = await db.$queryRaw<Array<{ id: string }>>`
    SELECT id FROM runs WHERE id = ANY(${ids}::text[]) AND status IN ('queued', 'running')`;
  return new Set(rows.map((r) => r.id));
}
