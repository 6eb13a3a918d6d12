import type { Queue, Worker } from 'bullmq';
import type { WebhookJobPayload } from '@testrun/contracts';
import { describeArtifactStore, type ArtifactStore } from '@testrun/core/artifact-store';
import type { Db } from '@testrun/core/db';
import type { Logger } from '@testrun/core/logger';
import type { BrowserPool } from '../browser/browser-pool';
import type { WorkerConfig } from '../config';
import { Reconciler } from '../housekeeping/reconciler';
import type { RunDeps } from '../run/run-deps';
import { RunCancels, subscribeRunCancels } from '../run/run-cancels';
import { type RunFaults } from '../run/run-faults';
import { isVideoAvailable } from '../run/video';
import { WebhookRelay } from '../webhooks/webhook-relay';
import { webhookJobOptions } from '../webhooks/webhook-worker';
import { Lifecycle } from './lifecycle';
import { startRuns } from './run-tasks';
import type { WorkerServiceOptions } from './service-options';
import {
  DrainState,
  drainTask,
  launchBrowser,
  openConnections,
  scratchDirectory,
  startWebhookWorker,
} from './service-tasks';
import { startWorkerHttp } from './worker-http';
import { WorkerMetrics } from './worker-metrics';

export type { WorkerServiceOptions } from './service-options';

/** A running worker process's parts, and how to stop them. */
export interface WorkerService {
  worker: Worker;
  browser: BrowserPool;
  reconciler: Reconciler;
  db: Db;
  store: ArtifactStore;
  recordVideo: boolean;
  /** Delivers webhook messages (docs/WEBHOOKS.md). */
  webhookWorker: Worker;
  /** The worker's Prometheus metrics (served on WORKER_HTTP_PORT when it is set). */
  metrics: WorkerMetrics;
  /** The port the worker's HTTP server listens on; undefined without WORKER_HTTP_PORT. */
  httpPort: number | undefined;
  /** What each run is executed with (the service's own parts and its executors). */
  runDeps: RunDeps;
  /** The worker's scratch directory: recordings and sandboxes' files pass through it (removed at stop). */
  scratchDir: string;
  /** The names of the start's tasks, in the order they were set up (a stop closes them last first). */
  tasks: readonly string[];
  /** Which run a fault belongs to (main.ts's fault guard asks it). */
  faults: RunFaults;
  /**
   * Stops taking jobs, lets in-flight runs finish for up to `drainTimeoutMs`, then closes the
   * browser and connections and removes the scratch directory. Resolves `handedBack: true` when
   * runs were still going at the bound: their jobs are left to stall, so another worker takes them over.
   */
  stop(): Promise<{ handedBack: boolean }>;
}

/**
 * Starts the worker process's parts in order, each a task of a {@link Lifecycle}: stop (and a start
 * that fails halfway) closes those that were opened, last first. The order is docs/ARCHITECTURE.md's
 * ("Start-up and shutdown"), which test/worker/worker-start-failure.test.ts checks (`tasks`).
 */
export async function startWorkerService(config: WorkerConfig, options: WorkerServiceOptions): Promise<WorkerService> {
  const { logger } = options;
  const recordVideo = videoRecording(config, logger);
  const lifecycle = new Lifecycle({ logger });
  const drain = new DrainState();
  const parts = await lifecycle.start((life) => startParts(life, config, { ...options, recordVideo }, drain));
  const tasks = lifecycle.names;
  logger.info('worker ready', {
    tasks,
    concurrency: config.concurrency,
    video: recordVideo,
    artifacts: describeArtifactStore(config.artifacts),
    lockDurationMs: config.lockDurationMs,
    stalledIntervalMs: config.stalledIntervalMs,
  });
  let stopping: Promise<{ handedBack: boolean }> | null = null;
  const stop = () => {
    drain.started = true;
    stopping ??= lifecycle.close().then(() => ({ handedBack: drain.handedBack }));
    return stopping;
  };
  return { ...parts, recordVideo, tasks, stop };
}

/** Whether runs are recorded on video: WORKER_VIDEO, and whether Playwright's ffmpeg is installed. */
function videoRecording(config: WorkerConfig, logger: Logger): boolean {
  if (config.video === 'off') return false;
  const available = isVideoAvailable();
  if (!available && config.video === 'on')
    throw new Error("WORKER_VIDEO=on but Playwright's ffmpeg is not installed (see docs/WORKER.md)");
  if (!available) logger.warn("video recording off: Playwright's ffmpeg is not installed");
  return available;
}

type Started = Omit<WorkerService, 'recordVideo' | 'tasks' | 'stop'>;

/** The tasks of the start, in order; see {@link startWorkerService}. */
async function startParts(
  life: Lifecycle,
  config: WorkerConfig,
  options: WorkerServiceOptions & { recordVideo: boolean },
  drain: DrainState,
): Promise<Started> {
  const { logger } = options;
  const connections = await openConnections(life, config, options, drain);
  const { db, egress, queue, queueConnection } = connections;
  // Read on each scrape; `browser` is made just below.
  const metrics = new WorkerMetrics({ queue, openContexts: () => browser.openContexts });
  const browser = await launchBrowser(life, config, egress, { ...options, metrics }, drain);
  const scratchDir = await scratchDirectory(life, options);
  // Cancels reach the runs of this process through Redis pub/sub, on a connection of their own.
  const cancels = new RunCancels();
  const subscription = await life.task('cancel subscription', () => {
    const value = subscribeRunCancels(config.redisUrl, config.redisPrefix, cancels, logger);
    return { value, tearDown: () => value.close() };
  });
  // Listening before the queue is up, so a Redis that does not answer at start shows in /readyz;
  // answered through the drain (liveness holds, readiness says draining).
  const { http } = config;
  const httpPort = http
    ? await life.task('http', async () => {
        const draining = () => drain.started;
        const value = await startWorkerHttp({ metrics, browser, db, redis: queueConnection, draining }, http);
        logger.info('http listening', { port: value.port, host: http.host });
        return { value: value.port, tearDown: () => value.close() };
      })
    : undefined;
  const { worker, runDeps, faults } = await startRuns(life, config, options, {
    connections,
    browser,
    scratchDir,
    cancels,
    metrics,
    drain,
  });
  const { webhookQueue, webhookWorker } = await startWebhookWorker(
    life,
    config,
    options,
    { ...connections, metrics },
    drain,
  );
  await drainTask(life, config, [worker, webhookWorker], drain);
  const reconciler = await startReconciler(life, config, options, { db, queue, store: connections.store, metrics });
  await startRelay(life, config, logger, { db, webhookQueue });
  await worker.waitUntilReady();
  await subscription.ready;
  await webhookWorker.waitUntilReady();
  return {
    worker,
    webhookWorker,
    browser,
    reconciler,
    db,
    store: connections.store,
    runDeps,
    scratchDir,
    faults,
    metrics,
    httpPort,
  };
}

/** The webhook relay: moves the outbox to the webhook queue; the first part stopped at stop. */
function startRelay(
  life: Lifecycle,
  config: WorkerConfig,
  logger: Logger,
  parts: { db: Db; webhookQueue: Queue<WebhookJobPayload> },
): Promise<WebhookRelay> {
  const { db, webhookQueue } = parts;
  return life.task('webhook relay', () => {
    const relay = new WebhookRelay({
      db,
      queue: webhookQueue,
      logger,
      jobOptions: webhookJobOptions(config.webhooks.retry),
      intervalMs: config.webhooks.relayIntervalMs,
      sweepIntervalMs: config.webhooks.sweepIntervalMs,
    });
    relay.start();
    return { value: relay, tearDown: () => relay.stop() };
  });
}

/** The reconciler, started unless `options.reconcile` is false; stopped before the drain. */
function startReconciler(
  life: Lifecycle,
  config: WorkerConfig,
  options: WorkerServiceOptions,
  parts: Pick<ConstructorParameters<typeof Reconciler>[0], 'db' | 'queue'> & {
    store: ArtifactStore;
    metrics: WorkerMetrics;
  },
): Promise<Reconciler> {
  return life.task('reconciler', () => {
    const reconciler = new Reconciler({
      db: parts.db,
      queue: parts.queue,
      logger: options.logger,
      intervalMs: config.reconcileIntervalMs,
      deadlineGraceMs: config.deadlineGraceMs,
      retention: { store: parts.store, defaults: config.retention },
      onPass: (report) => parts.metrics.observeReconcilePass(report),
    });
    if (options.reconcile !== false) reconciler.start();
    return { value: reconciler, tearDown: () => reconciler.stop() };
  });
}
