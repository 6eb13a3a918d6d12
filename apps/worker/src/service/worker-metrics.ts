import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { RunQueue } from '@testrun/core/queue';
import { collectProcessMetrics } from '@testrun/core/process-metrics';
import { withTimeout } from '@testrun/core/with-timeout';
import type { RunExecution } from '../run/run-deps';
import type { ReconcileReport } from '../housekeeping/reconciler';
import type { WebhookAttemptOutcome } from '../webhooks/webhook-worker';

/** How long a scrape waits for the queue's counts before it reports none. */
const QUEUE_COUNT_TIMEOUT_MS = 1_000;

/** The queue states reported by `testrun_queue_jobs` (BullMQ keeps jobs with a priority apart from `waiting`). */
const QUEUE_STATES = ['waiting', 'prioritized', 'active', 'delayed'] as const;

/** What the metrics read on each scrape, from the worker's own parts. */
export type WorkerMetricsSources = {
  /** The run queue, counted on each scrape. */
  queue: RunQueue;
  /** Browser contexts open right now. */
  openContexts: () => number;
};

/**
 * The worker's Prometheus metrics, in a registry of their own (several workers in one test process
 * each keep theirs). Labels hold closed sets only (statuses, outcome codes, queue states, reconciler
 * actions): never a run, workspace or test id.
 */
export class WorkerMetrics {
  readonly registry = new Registry();
  private readonly runsFinished = new Counter({
    name: 'testrun_worker_runs_finished_total',
    help: 'Runs this worker executed to a recorded end, by status and outcome code ("none" when passed).',
    labelNames: ['status', 'code'] as const,
    registers: [this.registry],
  });
  private readonly runDuration = new Histogram({
    name: 'testrun_worker_run_duration_seconds',
    help: 'Time from the claim of a run to its recorded end, by status.',
    labelNames: ['status'] as const,
    buckets: [0.5, 1, 2, 5, 10, 20, 30, 60, 120, 300, 600],
    registers: [this.registry],
  });
  private readonly relaunches = new Counter({
    name: 'testrun_worker_browser_relaunches_total',
    help: 'Times the warm browser was launched again after the first launch (it crashed or was closed underneath).',
    registers: [this.registry],
  });
  private readonly reconcilerActions = new Counter({
    name: 'testrun_worker_reconciler_actions_total',
    help: 'What the reconciler passes of this worker did: requeued, timed_out, lost (runs), purged (idempotency records), runs_expired (runs deleted by retention) and artifacts_expired (runs whose artifacts retention deleted).',
    labelNames: ['action'] as const,
    registers: [this.registry],
  });

  private readonly webhookAttempts = new Counter({
    name: 'testrun_worker_webhook_attempts_total',
    help: 'Webhook delivery attempts of this worker, by outcome: delivered (2xx), retry (failed, another attempt is due), failed (the last attempt failed).',
    labelNames: ['outcome'] as const,
    registers: [this.registry],
  });

  constructor(sources: WorkerMetricsSources) {
    collectProcessMetrics(this.registry);
    new Gauge({
      name: 'testrun_worker_browser_contexts',
      help: 'Browser contexts open in this worker (one per run under way).',
      registers: [this.registry],
      collect() {
        this.set(sources.openContexts());
      },
    });
    new Gauge({
      name: 'testrun_queue_jobs',
      help: 'Jobs of the run queue by state, read from Redis on each scrape (the whole queue: every worker reports the same figures).',
      labelNames: ['state'] as const,
      registers: [this.registry],
      async collect() {
        this.reset();
        try {
          const counts = await withTimeout(
            sources.queue.getJobCounts(...QUEUE_STATES),
            QUEUE_COUNT_TIMEOUT_MS,
            'counting the queue',
          );
          for (const state of QUEUE_STATES) this.set({ state }, counts[state] ?? 0);
        } catch {
          // Redis does not answer: no figure rather than a stale one (/readyz says why).
        }
      },
    });
  }

  /** Counts a run this worker ended (a run it could not claim, or whose end was not recorded, is not). */
  observeRun(execution: RunExecution): void {
    if (execution.kind !== 'finished' || !execution.recorded) return;
    this.runsFinished.inc({ status: execution.status, code: execution.code ?? 'none' });
    this.runDuration.observe({ status: execution.status }, execution.timings.totalMs / 1000);
  }

  countWebhookAttempt(outcome: WebhookAttemptOutcome): void {
    this.webhookAttempts.inc({ outcome });
  }

  countRelaunch(): void {
    this.relaunches.inc();
  }

  observeReconcilePass(report: ReconcileReport): void {
    if (!report.ran) return;
    this.reconcilerActions.inc({ action: 'requeued' }, report.requeued.length);
    this.reconcilerActions.inc({ action: 'timed_out' }, report.timedOut.length);
    this.reconcilerActions.inc({ action: 'lost' }, report.lost.length);
    this.reconcilerActions.inc({ action: 'purged' }, report.purged);
    this.reconcilerActions.inc({ action: 'runs_expired' }, report.expired?.runs ?? 0);
    this.reconcilerActions.inc({ action: 'artifacts_expired' }, report.expired?.artifactRuns ?? 0);
  }
}
