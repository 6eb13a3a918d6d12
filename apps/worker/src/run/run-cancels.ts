import { errorMessage, type Logger } from '@testrun/core/logger';
import { createRedis } from '@testrun/core/queue';
import { CANCELLED_RUNNING_OUTCOME, readRunCancels, runCancelChannel, type RunOutcome } from '@testrun/core/runs';
import { foldRepeats } from '../support/repeated-errors';

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

/**
 * How long a cancelled attempt may take to unwind on its own. Nearly always the step under way ends
 * at once (its calls are aborted) and the teardown closes the context; but a call that takes no
 * signal may wait on a page that stopped answering, and that must not keep the run, and a slot of
 * the worker, from ending: its context is then closed under it, and the run ends `cancelled`.
 */
const CANCEL_UNWIND_MS = 10_000;

/**
 * The attempt's outcome, or `cancelled` when it has not ended {@link CANCEL_UNWIND_MS} after a
 * cancel (its context is then closed under it, and it unwinds in the background).
 */
export function untilCancelled(
  attempt: Promise<RunOutcome>,
  scope: { signal: AbortSignal; forceClose?: () => void },
): Promise<RunOutcome> {
  const { signal } = scope;
  return new Promise((resolve, reject) => {
    let timer: NodeJS.Timeout | undefined;
    const onAbort = () => {
      timer = setTimeout(() => {
        scope.forceClose?.();
        resolve({ status: 'error', ...CANCELLED_RUNNING_OUTCOME });
      }, CANCEL_UNWIND_MS);
    };
    signal.addEventListener('abort', onAbort, { once: true });
    attempt.then(resolve, reject).finally(() => {
      clearTimeout(timer);
      signal.removeEventListener('abort', onAbort);
    });
  });
}
