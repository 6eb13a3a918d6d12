import type { Unclaimable } from './claim';
import type { BrowserContext, BrowserContextOptions } from 'playwright';
import type { RunErrorCode, RunFailureCode, TerminalRunStatus } from '@testrun/contracts';
import type { ArtifactStore } from '@testrun/core/artifact-store';
import type { Db } from '@testrun/core/db';
import type { Logger } from '@testrun/core/logger';
import type { TargetPolicy } from '@testrun/core/target-policy';
import type { Executors } from '../executors/executor';
import type { PlaywrightRuntime } from '../executors/playwright/playwright-runtime';
import type { EgressSource } from '../network/run-target';
import type { RunCancels } from './run-cancels';
import type { RunHolds } from './run-holds';
import type { RunFaults } from './run-faults';
import type { RunLimits } from './run-limits';

/** Where browser contexts come from: the process's warm browser (see BrowserPool). */
export interface ContextSource {
  newContext(options?: BrowserContextOptions): Promise<BrowserContext>;
}

/** What executeRun needs. */
export interface RunDeps {
  /** The executor of each kind of test (see executors/). */
  executors: Executors;
  db: Db;
  store: ArtifactStore;
  browser: ContextSource;
  /** Key that opens the runs' sealed headers (`deriveKeys(secret).headers`). */
  headersKey: Buffer;
  logger: Logger;
  /**
   * A directory of the worker's own for traces and videos on their way to the artifact store
   * (made and removed by the worker service); files in it are named per run and attempt.
   */
  scratchDir: string;
  /** Record a video of each run (needs Playwright's ffmpeg). Default false. */
  recordVideo?: boolean;
  /**
   * The worker's egress proxy: each run's context goes out through it with credentials of its own,
   * and a request the policy refuses ends the run `target_blocked`. Default none (no proxy).
   */
  egress?: EgressSource;
  /** The deployment's target network policy: the base URL and `goto` URLs are checked before they are opened. */
  targetPolicy?: TargetPolicy;
  /** Longest the teardown (trace, context close, video) may take before it is abandoned. Default 15000 ms. */
  teardownTimeoutMs?: number;
  /**
   * How long the claim or a result write that fails for a passing reason (Postgres restarting) is
   * tried again before the run is given up to the reconciler (WORKER_WRITE_RETRY_MS). Default 600000 ms.
   */
  writeRetryMs?: number;
  /** What each run's pages and recordings may use. Default {@link DEFAULT_RUN_LIMITS}. */
  limits?: RunLimits;
  /** The cancel signals of this process's runs (fed from Redis by the worker service). Default none: runs are stopped only by the reconciler. */
  cancels?: RunCancels;
  /** The holds of this process's running runs in Postgres (RunHolds). Default none: claims hold nothing. */
  holds?: RunHolds;
  /** Told when a cancelled run's browser context has been closed (benchmarks). Default nobody. */
  onContextCancelled?: (runId: string) => void;
  /**
   * Names the run of a fault no caller caught (see RunFaults, fault-guard.ts): each run executes as
   * its owner, and a fault of its ends its attempt `internal_error`. Default none.
   */
  faults?: RunFaults;
  /** Bundles, sandbox and egress of Playwright runs (service/playwright-tasks.ts). Default none: they end `error`. */
  playwright?: PlaywrightRuntime;
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
      /** Settles when the work the run's executor holds its job for has ended (a Playwright batch it leads). */
      held?: Promise<void>;
    }
  | { kind: 'not_runnable'; reason: Unclaimable };

/** Where the time of one run went: `browserMs` is time spent awaiting Playwright. */
export type RunTimings = { totalMs: number; browserMs: number };
