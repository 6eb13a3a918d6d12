import { ConfigError, createLogger, errorMessage } from '@testrun/core';
import { readWorkerConfig, type WorkerConfig } from './config';
import { startWorkerService } from './worker-service';

/**
 * `pnpm worker`: one process, one warm Chromium, WORKER_CONCURRENCY runs at once. SIGTERM/SIGINT
 * drain: no new jobs, in-flight runs finish within WORKER_DRAIN_TIMEOUT_MS or are handed back.
 */
async function main(): Promise<void> {
  let config: WorkerConfig;
  try {
    config = readWorkerConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`worker: configuration error: ${error.message}\n`);
      process.exit(78);
    }
    throw error;
  }
  const logger = createLogger({ service: 'worker', level: config.logLevel });
  const service = await startWorkerService(config, { logger });

  let signalled = false;
  const shutdown = (signal: string) => {
    if (signalled) return;
    signalled = true;
    logger.info('draining', { signal, drainTimeoutMs: config.drainTimeoutMs });
    service
      .stop()
      .then(({ handedBack }) => {
        if (handedBack) logger.warn('drain bound reached: in-flight runs handed back to the queue for another worker');
        else logger.info('stopped');
        // Exiting also ends the browser when the drain bound was reached (Playwright kills it on exit).
        logger.on('finish', () => process.exit(0));
        logger.end();
        setTimeout(() => process.exit(0), 1_000).unref();
      })
      .catch((error: unknown) => {
        logger.error('shutdown failed', { error: errorMessage(error) });
        process.exit(1);
      });
  };
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
}

main().catch((error: unknown) => {
  process.stderr.write(`worker: failed to start: ${errorMessage(error)}\n`);
  process.exit(1);
});
