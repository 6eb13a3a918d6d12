import { rm } from 'node:fs/promises';
import { Queue, type Worker } from 'bullmq';
import { JOBS, type WebhookJobPayload } from '@testrun/contracts';
import {
  createPrisma,
  createRedis,
  createArtifactStore,
  createRunQueue,
  deriveKeys,
  describeArtifactStore,
  systemLookup,
  TimeoutError,
  withTimeout,
  type ArtifactStore,
  type Db,
  type Logger,
  type LookupAll,
} from '@testrun/core';
import { BrowserPool } from '../browser/browser-pool';
import { startEgress } from '../network/worker-egress';
import type { WorkerConfig } from '../config';
import { EXECUTORS } from '../executors';
import type { RunDeps, RunExecution } from '../run/run-deps';
import { Reconciler } from '../housekeeping/reconciler';
import { foldRepeats } from './repeated-errors';
import { RunCancels, subscribeRunCancels } from '../run/run-cancels';
import { RunFaults } from '../run/run-faults';
import { createRunWorker } from './run-worker';
import { makeScratchDir, sweepStaleScratchDirs } from '../housekeeping/scratch-dir';
import { startWorkerHttp } from './worker-http';
import { WorkerMetrics } from './worker-metrics';
import { memoryArgs } from '../run/run-limits';
import { isVideoAvailable } from '../run/video';
import { WebhookRelay } from '../webhooks/webhook-relay';
import { createWebhookWorker, webhookJobOptions } from '../webhooks/webhook-worker';

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
  /** What each run is executed with (the service's own parts and scratch directory). */
  runDeps: RunDeps;
  /** Which run a fault belongs to (main.ts's fault guard asks it). */
  faults: RunFaults;
  /**
   * Stops taking jobs, lets in-flight runs finish for up to `drainTimeoutMs`, then closes the
   * browser and connections and removes the scratch directory. Resolves `handedBack: true` when
   * runs were still going at the bound: their jobs are left to stall, so another worker takes them over.
   */
  stop(): Promise<{ handedBack: boolean }>;
}

/** Options of {@link startWorkerService}. */
export interface WorkerServiceOptions {
  logger: Logger;
  /** Called after every run. Default none. */
  onRunDone?: (runId: string, execution: RunExecution) => void;
  /** Run the reconciler in this process. Default true. */
  reconcile?: boolean;
  /** Resolves the host names runs ask for. Default: the system resolver. Tests give a table of their own. */
  lookup?: LookupAll;
  /** Told when a cancelled run's browser context has been closed (benchmarks). Default nobody. */
  onContextCancelled?: (runId: string) => void;
}

export async function startWorkerService(config: WorkerConfig, options: WorkerServiceOptions): Promise<WorkerService> {
  const { logger } = options;
  let recordVideo = false;
  if (config.video !== 'off') {
    recordVideo = isVideoAvailable();
    if (!recordVideo && config.video === 'on')
      throw new Error("WORKER_VIDEO=on but Playwright's ffmpeg is not installed (see docs/WORKER.md)");
    if (!recordVideo) logger.warn("video recording off: Playwright's ffmpeg is not installed");
  }
  const db = createPrisma({ databaseUrl: config.databaseUrl, max: Math.max(4, config.concurrency * 2 + 2) });
  const store = createArtifactStore(config.artifacts);
  // Every request of every run's browser goes out through this process's egress proxy, which
  // enforces the target network policy on the addresses it connects to; the browser's network
  // namespace leaves it no other way out.
  const egress = await startEgress(config.targetPolicy, logger, options.lookup, config.browserNetworkIsolation);
  const workerConnection = createRedis(config.redisUrl);
  const queueConnection = createRedis(config.redisUrl);
  const queue = createRunQueue(queueConnection, config.redisPrefix);
  // Read on each scrape; `browser` is made just below.
  const metrics = new WorkerMetrics({ queue, openContexts: () => browser.openContexts });
  const browser = new BrowserPool({
    executablePath: config.chromiumPath,
    extraArgs: [...egress.launchArgs, ...memoryArgs(config.limits)],
    wrapExecutable: egress.wrapExecutable,
    onEvent: (event) => {
      if (event.type === 'launched' && event.launchCount > 1) metrics.countRelaunch();
      if (event.type === 'launched')
        logger.info('browser launched', {
          executablePath: event.executablePath,
          durationMs: event.durationMs,
          launchCount: event.launchCount,
        });
      else if (!event.expected) logger.warn('browser disconnected; it will be launched again for the next run');
    },
  });
  // Warm it now: the first run should not pay for the launch, and a missing browser should stop the process at start.
  await browser.getBrowser();

  // The reconciler's queue: without a listener BullMQ prints each connection error's stack on stderr,
  // outside the JSON log, every reconnect attempt while Redis is down.
  queue.on(
    'error',
    foldRepeats((error, folded) => logger.warn('run queue error', { error: error.message, folded })),
  );
  // Traces and videos pass through here on their way to the artifact store; removed on stop. Those
  // of workers that were killed before they could remove theirs go now.
  for (const dir of await sweepStaleScratchDirs()) logger.info("removed a stopped worker's scratch directory", { dir });
  const scratchDir = await makeScratchDir();
  // Cancels reach the runs of this process through Redis pub/sub, on a connection of their own.
  const cancels = new RunCancels();
  const cancelSubscription = subscribeRunCancels(config.redisUrl, config.redisPrefix, cancels, logger);
  const faults = new RunFaults();
  const deps: RunDeps = {
    executors: EXECUTORS,
    cancels,
    faults,
    onContextCancelled: options.onContextCancelled,
    db,
    store,
    browser: {
      // A browser (re)launched for a run's context outlives the run: its pipe, whose callbacks
      // deliver every Playwright event, must not carry that run (see RunFaults).
      newContext: async (contextOptions) => {
        await faults.outside(() => browser.getBrowser());
        return browser.newContext(contextOptions);
      },
    },
    headersKey: deriveKeys(config.secret).headers,
    logger,
    scratchDir,
    recordVideo,
    egress: egress.proxy,
    targetPolicy: egress.policy,
    limits: config.limits,
    writeRetryMs: config.writeRetryMs,
  };
  const worker = createRunWorker(deps, {
    connection: workerConnection,
    prefix: config.redisPrefix,
    concurrency: config.concurrency,
    lockDurationMs: config.lockDurationMs,
    stalledIntervalMs: config.stalledIntervalMs,
    onRunDone: (runId, execution) => {
      metrics.observeRun(execution);
      options.onRunDone?.(runId, execution);
    },
  });
  const reconciler = new Reconciler({
    db,
    queue,
    logger,
    intervalMs: config.reconcileIntervalMs,
    deadlineGraceMs: config.deadlineGraceMs,
    retention: { store, defaults: config.retention },
    onPass: (report) => metrics.observeReconcilePass(report),
  });
  if (options.reconcile !== false) reconciler.start();

  // Webhooks: the relay moves the outbox (written by the database with each terminal transition)
  // to the webhook queue, whose worker signs and sends each message.
  const webhookConnection = createRedis(config.redisUrl);
  const webhookQueue = new Queue<WebhookJobPayload>(JOBS.webhook.queue, {
    connection: queueConnection,
    prefix: config.redisPrefix,
  });
  webhookQueue.on(
    'error',
    foldRepeats((error, folded) => logger.warn('webhook queue error', { error: error.message, folded })),
  );
  const keys = deriveKeys(config.secret);
  const webhookWorker = createWebhookWorker(
    {
      db,
      keys,
      links: config,
      policy: egress.policy,
      lookup: options.lookup ?? systemLookup,
      logger,
      timeoutMs: config.webhooks.timeoutMs,
      retry: config.webhooks.retry,
      onAttempt: (outcome) => metrics.countWebhookAttempt(outcome),
    },
    {
      connection: webhookConnection,
      prefix: config.redisPrefix,
      concurrency: config.webhooks.concurrency,
      workspaceConcurrency: config.webhooks.workspaceConcurrency,
      endpointConcurrency: config.webhooks.endpointConcurrency,
      lockDurationMs: config.lockDurationMs,
      stalledIntervalMs: config.stalledIntervalMs,
    },
  );
  const relay = new WebhookRelay({
    db,
    queue: webhookQueue,
    logger,
    jobOptions: webhookJobOptions(config.webhooks.retry),
    intervalMs: config.webhooks.relayIntervalMs,
    sweepIntervalMs: config.webhooks.sweepIntervalMs,
  });
  relay.start();
  let stopping: Promise<{ handedBack: boolean }> | null = null;
  const draining = () => stopping !== null;
  // Listening before the queue is up, so a Redis that does not answer at start shows in /readyz.
  const http = config.http
    ? await startWorkerHttp({ metrics, browser, db, redis: queueConnection, draining }, config.http)
    : null;
  if (http) logger.info('http listening', { port: http.port, host: config.http?.host });
  await worker.waitUntilReady();
  await cancelSubscription.ready;
  await webhookWorker.waitUntilReady();
  logger.info('worker ready', {
    concurrency: config.concurrency,
    video: recordVideo,
    artifacts: describeArtifactStore(config.artifacts),
    lockDurationMs: config.lockDurationMs,
    stalledIntervalMs: config.stalledIntervalMs,
  });

  const stop = () => {
    stopping ??= (async () => {
      try {
        return await drainAndClose();
      } finally {
        // Runs handed back are abandoned here (another worker starts them again): their files can go too.
        await rm(scratchDir, { recursive: true, force: true });
        // Answered through the drain (liveness holds, readiness says draining); closed last.
        await http?.close();
      }
    })();
    return stopping;
  };
  const drainAndClose = async (): Promise<{ handedBack: boolean }> => {
    await reconciler.stop();
    await relay.stop();
    let handedBack = false;
    try {
      await withTimeout(
        Promise.all([worker.close(), webhookWorker.close()]),
        config.drainTimeoutMs,
        'draining the in-flight runs and deliveries',
      );
    } catch (error) {
      if (!(error instanceof TimeoutError)) throw error;
      handedBack = true;
    }
    cancelSubscription.close();
    if (!handedBack) {
      await browser.close();
      await egress.close();
      await queue.close().catch(() => undefined);
      await webhookQueue.close().catch(() => undefined);
      queueConnection.disconnect();
      webhookConnection.disconnect();
      workerConnection.disconnect();
      await db.$disconnect();
    }
    return { handedBack };
  };
  return {
    worker,
    webhookWorker,
    browser,
    reconciler,
    db,
    store,
    recordVideo,
    runDeps: deps,
    faults,
    metrics,
    httpPort: http?.port,
    stop,
  };
}
