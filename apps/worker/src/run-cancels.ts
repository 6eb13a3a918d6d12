import { createRedis, errorMessage, readRunCancels, runCancelChannel, type Logger } from '@testrun/core';
import { foldRepeats } from './repeated-errors';

/**
 * The cancel signals of the runs this process is executing: one AbortSignal per run, aborted when a
 * cancel for the run arrives (from Redis, or found in Postgres when the run is claimed). Whatever
 * works on a run consults its signal: the browser context is closed on abort, and a loop that would
 * start more work for the run (another step, another attempt) checks `signal.aborted` first and ends
 * the run `cancelled` instead.
 */
export class RunCancels {
  private readonly controllers = new Map<string, AbortController>();

  /** The signal of a run starting in this process; {@link release} it when the run ends. */
  track(runId: string): AbortSignal {
    let controller = this.controllers.get(runId);
    if (!controller) {
      controller = new AbortController();
      this.controllers.set(runId, controller);
    }
    return controller.signal;
  }

  /** Forgets a run that ended here. */
  release(runId: string): void {
    this.controllers.delete(runId);
  }

  /** Aborts the signal of a run running here; false when it is not (another worker has it, or it ended). */
  cancel(runId: string): boolean {
    const controller = this.controllers.get(runId);
    if (!controller) return false;
    controller.abort();
    return true;
  }
}

/** The subscriber connection that feeds {@link RunCancels}, and how to close it. */
export type CancelSubscription = { ready: Promise<void>; close(): void };

/**
 * Listens on the deployment's cancel channel (under REDIS_PREFIX) on a connection of its own (a
 * subscribed connection can do nothing else), and aborts the signal of every run named that runs
 * here. ioredis subscribes again after a reconnect; a message missed meanwhile is made up for by
 * the reconciler, which ends a run whose cancel was asked and not honoured within a few seconds.
 */
export function subscribeRunCancels(
  redisUrl: string,
  redisPrefix: string,
  cancels: RunCancels,
  logger: Logger,
): CancelSubscription {
  const subscriber = createRedis(redisUrl);
  const channel = runCancelChannel(redisPrefix);
  // While Redis is down this fires on every reconnect attempt: one line per message and period.
  subscriber.on(
    'error',
    foldRepeats((error, folded) => logger.warn('run cancel subscriber error', { error: error.message, folded })),
  );
  subscriber.on('message', (from: string, message: string) => {
    if (from !== channel) return;
    for (const runId of readRunCancels(message)) {
      if (cancels.cancel(runId)) logger.info('run cancel received; stopping the run', { runId });
    }
  });
  const ready = subscriber.subscribe(channel).then(
    () => undefined,
    (error: unknown) => {
      logger.warn('could not subscribe to run cancels', { error: errorMessage(error) });
    },
  );
  return { ready, close: () => subscriber.disconnect() };
}
