// The run side of the worker's start (see worker-service.ts for the order): the Playwright
// runtime, the holds of the runs running here, the executors made with the service's parts, and
// the run queue's consumer.
import type { Worker } from 'bullmq';
import { deriveKeys } from '@testrun/core/secrets';
import type { BrowserPool } from '../browser/browser-pool';
import type { WorkerConfig } from '../config';
import { workerRunDeps } from '../executors';
import type { PlaywrightRuntime } from '../executors/playwright';
import type { EgressSource } from '../network/run-target';
import type { RunCancels } from '../run/run-cancels';
import type { RunDeps } from '../run/run-deps';
import { RunFaults } from '../run/run-faults';
import { RunHolds } from '../run/run-holds';
import type { Lifecycle } from './lifecycle';
import { startPlaywright } from './playwright-tasks';
import { createRunWorker } from './run-worker';
import type { WorkerServiceOptions } from './service-options';
import type { DrainState, openConnections } from './service-tasks';
import type { WorkerMetrics } from './worker-metrics';

/** What the run side starts with: the connections, browser, scratch directory and cancels opened before it. */
type RunSideParts = {
  connections: Awaited<ReturnType<typeof openConnections>>;
  browser: BrowserPool;
  scratchDir: string;
  cancels: RunCancels;
  metrics: WorkerMetrics;
  drain: DrainState;
};

/** Starts the Playwright runtime, the run holds and the run worker, with the executors made for them. */
export async function startRuns(
  life: Lifecycle,
  config: WorkerConfig,
  options: WorkerServiceOptions & { recordVideo: boolean },
  given: RunSideParts,
): Promise<{ worker: Worker; runDeps: RunDeps; faults: RunFaults }> {
  const { logger } = options;
  const { connections, metrics, drain } = given;
  const faults = new RunFaults();
  const playwright = await startPlaywright(life, config, logger, { ...connections, scratchDir: given.scratchDir });
  // The holds of the runs running here, renewed in Postgres while they run (run/run-holds.ts).
  const holds = await life.task('run holds', () => {
    const value = new RunHolds(connections.db, config.lockDurationMs, logger);
    value.start();
    return { value, tearDown: () => value.stop() };
  });
  const parts = { ...connections, ...given, faults, playwright, holds };
  const runDeps = runDepsOf(config, options, parts);
  const worker = await life.task('run worker', () => {
    const value = createRunWorker(runDeps, {
      connection: connections.workerConnection,
      prefix: config.redisPrefix,
      concurrency: config.concurrency,
      lockDurationMs: config.lockDurationMs,
      stalledIntervalMs: config.stalledIntervalMs,
      onRunDone: (runId, execution) => {
        metrics.observeRun(execution);
        options.onRunDone?.(runId, execution);
      },
    });
    return { value, tearDown: drain.unlessHandedBack(() => value.close()) };
  });
  return { worker, runDeps, faults };
}

/** What each run is executed with: the service's own parts, and its executors made with them. */
function runDepsOf(
  config: WorkerConfig,
  options: WorkerServiceOptions & { recordVideo: boolean },
  parts: Pick<RunDeps, 'db' | 'store' | 'cancels' | 'faults' | 'holds'> & {
    scratchDir: string;
    playwright: PlaywrightRuntime | undefined;
    browser: BrowserPool;
    egress: { proxy: EgressSource | undefined; policy: RunDeps['targetPolicy'] };
    faults: RunFaults;
  },
): RunDeps {
  const { browser, faults, playwright } = parts;
  const base = {
    cancels: parts.cancels,
    holds: parts.holds,
    faults,
    db: parts.db,
    store: parts.store,
    headersKey: deriveKeys(config.secret).headers,
    logger: options.logger,
    targetPolicy: parts.egress.policy,
    writeRetryMs: config.writeRetryMs,
  };
  return workerRunDeps(base, {
    browser: {
      // A browser (re)launched for a run's context outlives the run: its pipe, whose callbacks
      // deliver every Playwright event, must not carry that run (see RunFaults).
      newContext: async (contextOptions) => {
        await faults.outside(() => browser.getBrowser());
        return browser.newContext(contextOptions);
      },
    },
    scratchDir: parts.scratchDir,
    recordVideo: options.recordVideo,
    onContextCancelled: options.onContextCancelled,
    limits: config.limits,
    ...(parts.egress.proxy ? { egress: parts.egress.proxy } : {}),
    ...(playwright ? { playwright } : {}),
  });
}
