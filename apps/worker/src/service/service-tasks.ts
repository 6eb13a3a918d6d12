// The worker process's parts, each set up by a task of its Lifecycle (see worker-service.ts for
// their order): what each one opens and the tear-down that closes it.
import { rm } from 'node:fs/promises';
import { Queue, type Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import { JOBS, type WebhookJobPayload } from '@testrun/contracts';
import { createArtifactStore, type ArtifactStore } from '@testrun/core/artifact-store';
import { createPrisma, type Db } from '@testrun/core/db';
import { createRedis, createRunQueue, type RunQueue } from '@testrun/core/queue';
import { deriveKeys } from '@testrun/core/secrets';
import { systemLookup } from '@testrun/core/target-policy';
import { TimeoutError, withTimeout } from '@testrun/core/with-timeout';
import { BrowserPool } from '../browser/browser-pool';
import type { WorkerConfig } from '../config';
import { makeScratchDir, sweepStaleScratchDirs } from '../support/scratch-dir';
import { startEgress, type WorkerEgress } from '../network/worker-egress';
import { memoryArgs } from '../run/run-limits';
import { sweepStaleScratch } from '../sandbox';
import { createWebhookWorker } from '../webhooks/webhook-worker';
import type { Lifecycle, TearDown } from './lifecycle';
import { foldRepeats } from '../support/repeated-errors';
import type { WorkerServiceOptions } from './service-options';
import type { WorkerMetrics } from './worker-metrics';

/**
 * How the process is stopping. A drain that reaches its bound hands the runs still going back to
 * the queue: what they use (the browser, the connections) is then left open for them, and the
 * process exits with them unfinished.
 */
export class DrainState {
  started = false;
  handedBack = false;

  /** `tearDown`, skipped when runs were handed back. */
  unlessHandedBack(tearDown: TearDown): TearDown {
    return () => (this.handedBack ? undefined : tearDown());
  }
}

/** Postgres, the artifact store, the egress proxy and the three Redis connections, with the run queue. */
export async function openConnections(
  life: Lifecycle,
  config: WorkerConfig,
  options: WorkerServiceOptions,
  drain: DrainState,
) {
  const { logger } = options;
  const db: Db = await life.task('database', () => {
    const value = createPrisma({ databaseUrl: config.databaseUrl, max: Math.max(4, config.concurrency * 2 + 2) });
    return { value, tearDown: drain.unlessHandedBack(() => value.$disconnect()) };
  });
  const store: ArtifactStore = createArtifactStore(config.artifacts);
  // Every request of every run's browser goes out through this process's egress proxy, which
  // enforces the target network policy on the addresses it connects to; the browser's network
  // namespace leaves it no other way out.
  const egress: WorkerEgress = await life.task('egress proxy', async () => {
    const value = await startEgress(config.targetPolicy, logger, options.lookup, config.browserNetworkIsolation);
    return { value, tearDown: drain.unlessHandedBack(() => value.close()) };
  });
  const queueConnection = await redisTask(life, 'run queue connection', config, drain);
  // The reconciler's queue: without a listener BullMQ prints each connection error's stack on stderr,
  // outside the JSON log, every reconnect attempt while Redis is down.
  const queue: RunQueue = await life.task('run queue', () => {
    const value = createRunQueue(queueConnection, config.redisPrefix);
    value.on(
      'error',
      foldRepeats((error, folded) => logger.warn('run queue error', { error: error.message, folded })),
    );
    return { value, tearDown: drain.unlessHandedBack(() => value.close().catch(() => undefined)) };
  });
  const workerConnection = await redisTask(life, 'run worker connection', config, drain);
  const webhookConnection = await redisTask(life, 'webhook worker connection', config, drain);
  return { db, store, egress, queue, queueConnection, workerConnection, webhookConnection };
}

/** A Redis connection of its own, disconnected at stop. */
function redisTask(life: Lifecycle, name: string, config: WorkerConfig, drain: DrainState): Promise<Redis> {
  return life.task(name, () => {
    const value = createRedis(config.redisUrl);
    return { value, tearDown: drain.unlessHandedBack(() => value.disconnect()) };
  });
}

/** The warm browser: launched now, so that the first run does not pay for it and a missing one stops the start. */
export function launchBrowser(
  life: Lifecycle,
  config: WorkerConfig,
  egress: WorkerEgress,
  options: WorkerServiceOptions & { metrics: WorkerMetrics },
  drain: DrainState,
): Promise<BrowserPool> {
  const { logger, metrics } = options;
  return life.task('browser', async () => {
    const browser = new BrowserPool({
      executablePath: config.chromiumPath,
      headlessShellPath: config.headlessShellPath,
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
    await browser.getBrowser();
    return { value: browser, tearDown: drain.unlessHandedBack(() => browser.close()) };
  });
}

/**
 * Traces and videos pass through here on their way to the artifact store; removed on stop. Those
 * of workers that were killed before they could remove theirs go now.
 */
export function scratchDirectory(life: Lifecycle, options: WorkerServiceOptions): Promise<string> {
  return life.task('scratch directory', async () => {
    // A killed worker's scratch quota mounts first: its directory cannot go while one is mounted in it.
    await sweepStaleScratch();
    const { removed, failed } = await sweepStaleScratchDirs();
    for (const dir of removed) options.logger.info("removed a stopped worker's scratch directory", { dir });
    for (const { dir, reason } of failed)
      options.logger.warn("cannot remove a stopped worker's scratch directory; left as it is", { dir, reason });
    const value = await makeScratchDir();
    // Runs handed back are abandoned here (another worker starts them again): their files can go too.
    return { value, tearDown: () => rm(value, { recursive: true, force: true }) };
  });
}

/**
 * Webhooks: the relay moves the outbox (written by the database with each terminal transition)
 * to the webhook queue, whose worker signs and sends each message.
 */
export async function startWebhookWorker(
  life: Lifecycle,
  config: WorkerConfig,
  options: WorkerServiceOptions,
  parts: { db: Db; egress: WorkerEgress; metrics: WorkerMetrics; queueConnection: Redis; webhookConnection: Redis },
  drain: DrainState,
): Promise<{ webhookQueue: Queue<WebhookJobPayload>; webhookWorker: Worker }> {
  const { logger } = options;
  const webhookQueue = await life.task('webhook queue', () => {
    const value = new Queue<WebhookJobPayload>(JOBS.webhook.queue, {
      connection: parts.queueConnection,
      prefix: config.redisPrefix,
    });
    value.on(
      'error',
      foldRepeats((error, folded) => logger.warn('webhook queue error', { error: error.message, folded })),
    );
    return { value, tearDown: drain.unlessHandedBack(() => value.close().catch(() => undefined)) };
  });
  const webhookWorker = await life.task('webhook worker', () => {
    const value = createWebhookWorker(
      {
        db: parts.db,
        keys: deriveKeys(config.secret),
        links: config,
        policy: parts.egress.policy,
        lookup: options.lookup ?? systemLookup,
        logger,
        timeoutMs: config.webhooks.timeoutMs,
        retry: config.webhooks.retry,
        onAttempt: (outcome) => parts.metrics.countWebhookAttempt(outcome),
      },
      {
        connection: parts.webhookConnection,
        prefix: config.redisPrefix,
        concurrency: config.webhooks.concurrency,
        workspaceConcurrency: config.webhooks.workspaceConcurrency,
        endpointConcurrency: config.webhooks.endpointConcurrency,
        lockDurationMs: config.lockDurationMs,
        stalledIntervalMs: config.stalledIntervalMs,
      },
    );
    return { value, tearDown: drain.unlessHandedBack(() => value.close()) };
  });
  return { webhookQueue, webhookWorker };
}

/**
 * The drain, first to run at stop once the loops have stopped: no new jobs, in-flight runs and
 * deliveries finish within `drainTimeoutMs`, or are handed back (their jobs stall, and another
 * worker takes them over).
 */
export function drainTask(life: Lifecycle, config: WorkerConfig, workers: Worker[], drain: DrainState): Promise<void> {
  return life.task('drain', () => ({
    value: undefined,
    deadlineMs: config.drainTimeoutMs + 10_000,
    tearDown: async () => {
      try {
        await withTimeout(
          Promise.all(workers.map((worker) => worker.close())),
          config.drainTimeoutMs,
          'draining the in-flight runs and deliveries',
        );
      } catch (error) {
        if (!(error instanceof TimeoutError)) throw error;
        drain.handedBack = true;
      }
    },
  }));
}
