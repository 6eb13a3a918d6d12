import { ConfigError } from '@testrun/core/env';
import { createLogger, errorMessage } from '@testrun/core/logger';
import { readWorkerConfig, type WorkerConfig } from './config';
import { installFaultGuard } from './run/fault-guard';
import { startWorkerService } from './service/worker-service';

/** The exit code after a drain forced by a fault that belongs to no run (sysexits' EX_SOFTWARE). */
const EXIT_PROCESS_FAULT = 70;

/**
 * `pnpm worker`: one process, one warm Chromium, WORKER_CONCURRENCY runs at once. SIGTERM/SIGINT
 * drain: no new jobs, in-flight runs finish within WORKER_DRAIN_TIMEOUT_MS or are handed back. A
 * fault no caller caught ends its run `internal_error`, or, when it belongs to no run, drains the
 * process the same way and exits 70 (fault-guard.ts).
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
  let exitCode = 0;
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
        logger.on('finish', () => process.exit(exitCode));
        logger.end();
        setTimeout(() => process.exit(exitCode), 1_000).unref();
      })
      .catch((error: unknown) => {
        logger.error('shutdown failed', { error: errorMessage(error) });
        process.exit(1);
      });
  };
  installFaultGuard({
    faults: service.faults,
    logger,
    onProcessFault: () => {
      exitCode = EXIT_PROCESS_FAULT;
      shutdown('fault');
    },
  });
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  process.on('SIGINT', () => shutdown('SIGINT'));
}

main().catch((error: unknown) => {
  process.stderr.write(`worker: failed to start: ${errorMessage(error)}\n`);
  process.exit(1);
});
