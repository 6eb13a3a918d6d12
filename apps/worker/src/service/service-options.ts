import type { Logger } from '@testrun/core/logger';
import type { LookupAll } from '@testrun/core/target-policy';
import type { RunExecution } from '../run/run-deps';

/** Options of startWorkerService. */
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
