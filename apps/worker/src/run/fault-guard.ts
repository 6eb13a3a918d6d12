import { errorMessage, type Logger } from '@testrun/core/logger';
import type { RunFaults } from './run-faults';

/** Where a fault came from: Node's name for it. */
type FaultOrigin = 'uncaughtException' | 'unhandledRejection';

/** Options of {@link installFaultGuard}. */
export interface FaultGuardOptions {
  faults: RunFaults;
  logger: Logger;
  /** Called once, for the first fault that belongs to no run: the process should drain and exit non-zero. */
  onProcessFault: () => void;
}

/**
 * The process's last line against an `uncaughtException` or `unhandledRejection`: without it one
 * run's fault (Playwright throwing from its connection while a context closes) kills the process,
 * and every run on it, any tenant's, stalls until its lock expires.
 *
 * A fault that belongs to a run (see RunFaults for what can be attributed) ends that run's attempt
 * `internal_error` and the process carries on; one raised while no attempt of the run is under way
 * (its claim, its terminal write, after it ended) is only logged. A fault that belongs to no run
 * leaves the process in a state nobody can vouch for: it drains, as on SIGTERM, and exits non-zero.
 * Returns a function that removes the guard.
 */
export function installFaultGuard(options: FaultGuardOptions): () => void {
  const { faults, logger } = options;
  let draining = false;
  const handle = (error: unknown, origin: FaultOrigin) => {
    const owner = faults.current();
    if (owner) {
      const fields = { runId: owner.runId, origin, error: owner.mask(errorMessage(error)), stack: frames(error) };
      if (owner.live && owner.fault(error)) logger.error('fault of a run caught: the run ends internal_error', fields);
      else logger.warn('fault of a run caught while no attempt of it was under way', fields);
      return;
    }
    logger.error('fault outside any run: the worker drains and exits', {
      origin,
      error: faults.maskAll(errorMessage(error)),
      stack: frames(error),
    });
    if (draining) return;
    draining = true;
    options.onProcessFault();
  };
  const onException = (error: Error, origin: FaultOrigin) => handle(error, origin);
  const onRejection = (reason: unknown) => handle(reason, 'unhandledRejection');
  process.on('uncaughtException', onException);
  process.on('unhandledRejection', onRejection);
  return () => {
    process.off('uncaughtException', onException);
    process.off('unhandledRejection', onRejection);
  };
}

/** The stack's frames without its message (which may quote a page's values): where, not what. */
function frames(error: unknown): string | undefined {
  if (!(error instanceof Error) || !error.stack) return undefined;
  return error.stack
    .split('\n')
    .filter((line) => line.trimStart().startsWith('at '))
    .slice(0, 12)
    .map((line) => line.trim())
    .join('\n');
}
