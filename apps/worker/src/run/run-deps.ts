import type { Unclaimable } from './claim';
import type { RunErrorCode, RunFailureCode, TerminalRunStatus } from '@testrun/contracts';
import type { ArtifactStore } from '@testrun/core/artifact-store';
import type { Db } from '@testrun/core/db';
import type { Logger } from '@testrun/core/logger';
import type { TargetPolicy } from '@testrun/core/target-policy';
import type { Executors, JobWatch } from './executor';
import type { RunCancels } from './run-cancels';
import type { RunHolds } from './run-holds';
import type { RunFaults } from './run-faults';

/** What executeRun needs. */
export interface RunDeps {
  /** The executor of each kind of test, by `runs.kind` (made by executors/index.ts). */
  executors: Executors;
  db: Db;
  store: ArtifactStore;
  /** Key that opens the runs' sealed headers (`deriveKeys(secret).headers`). */
  headersKey: Buffer;
  logger: Logger;
  /** The deployment's target network policy: the base URL and `goto` URLs are checked before they are opened. */
  targetPolicy?: TargetPolicy;
  /**
   * How long the claim or a result write that fails for a passing reason (Postgres restarting) is
   * tried again before the run is given up to the reconciler (WORKER_WRITE_RETRY_MS). Default 600000 ms.
   */
  writeRetryMs?: number;
  /** The cancel signals of this process's runs (fed from Redis by the worker service). Default none: runs are stopped only by the reconciler. */
  cancels?: RunCancels;
  /** The holds of this process's running runs in Postgres (RunHolds). Default none: claims hold nothing. */
  holds?: RunHolds;
  /**
   * Names the run of a fault no caller caught (see RunFaults, fault-guard.ts): each run executes as
   * its owner, and a fault of its ends its attempt `internal_error`. Default none.
   */
  faults?: RunFaults;
  /** What the jobs bringing runs here tell the executors that wait for them. Default none. */
  jobs?: JobWatch;
}

/** How a call of executeRun ended, for the caller's log and for benchmarks. */
export type RunExecution =
  | {
      kind: 'finished';
      status: TerminalRunStatus;
      /** The failure or error code of a run that did not pass (none when it gave none). */
      code?: RunFailureCode | RunErrorCode;
      attempt: number;
      recorded: boolean;
      timings: RunTimings;
      /** Settles when the work the run's executor holds its job for has ended (a batch it leads). */
      held?: Promise<void>;
    }
  | { kind: 'not_runnable'; reason: Unclaimable };

/** Where the time of one run went: `browserMs` is time spent awaiting Playwright. */
export type RunTimings = { totalMs: number; browserMs: number };
