// What an executor is: the part of a run that depends on how its test is defined. The run's
// lifecycle (claim, retried writes, secrets' mask, egress, cancels, faults, retries, the terminal
// write: run/) is the same for every kind of test and calls the executor of the run's kind.
import type { BrowserContext, BrowserContextOptions } from 'playwright';
import { isPlaywrightDefinition } from '@testrun/contracts';
import type { Db } from '@testrun/core/db';
import type { Logger } from '@testrun/core/logger';
import type { ClaimedRun, RetriedOutcome, RunOutcome } from '@testrun/core/runs';
import type { TargetPolicy } from '@testrun/core/target-policy';
import type { BrowserClock } from '../browser/browser-clock';
import type { BlockedRequest } from '../network/egress-proxy';
import type { ArtifactWriter } from '../run/artifact-writer';
import type { Retrying } from '../run/claim';
import type { RunLimits } from '../run/run-limits';
import type { SecretMask } from '../run/secret-mask';
import type { PlaywrightRuntime } from './playwright/playwright-runtime';

/** The kinds of test a run can hold, one executor each (see {@link Executors}). */
export type ExecutorKind = 'steps' | 'playwright';

/** The executor of each kind: adding a kind of test is one entry here and one module under executors/. */
export type Executors = Readonly<Record<ExecutorKind, Executor>>;

/** A claimed run as every attempt sees it (the attempt number and retry are the attempt's own). */
export type RunRecord = Omit<ClaimedRun, 'attempt' | 'prevStatus' | 'retry'>;

/** What an executor is given to read the run's definition and open its secrets, once per attempt. */
export interface ExecutorRun {
  readonly run: RunRecord;
  readonly db: Db;
  /** Key that opens the run's sealed headers and variables (`deriveKeys(secret).headers`). */
  readonly headersKey: Buffer;
  /** Runs a Postgres call again while it fails for a reason that may pass (an outage). */
  readonly retry: Retrying;
}

/** What an executor is given for one attempt: built once, before it starts, and never changed. */
export interface ExecutorAttempt {
  readonly run: RunRecord;
  /** The attempt's execution number (its rows and artifacts are recorded under it). */
  readonly attempt: number;
  /** The only writer of the attempt's step rows and artifacts. */
  readonly writer: ArtifactWriter;
  /** Every Playwright call is awaited through it, to tell the worker's own time apart. */
  readonly clock: BrowserClock;
  /**
   * Aborted when the run is cancelled: the work under way has its browser calls aborted, nothing
   * more starts, and the attempt returns (its outcome becomes `cancelled` whatever it is).
   */
  readonly signal: AbortSignal;
  /** The run's target network policy (the deployment's narrowed by the workspace's); none without one. */
  readonly policy: TargetPolicy | undefined;
  /** What the egress proxy refused for this attempt so far (grows as it refuses; empty without a proxy). */
  readonly blocked: readonly BlockedRequest[] | undefined;
  /**
   * Opens the attempt's browser context through the attempt's egress, with downloads off and the
   * video the run's evidence policy asks for; the caller closes it.
   */
  readonly openContext: (options: BrowserContextOptions) => Promise<BrowserContext>;
  /**
   * Tells the lifecycle how to close the attempt's context under it (for an attempt that does not
   * unwind after a cancel or a fault), and `null` once the teardown has begun.
   */
  readonly closeUnder: (close: (() => void) | null) => void;
  /**
   * For a test its own runner retried within the attempt (a Playwright config's retries): records
   * the try under way as an attempt of the run that ended as `ended` when `ran` says, as a retry of
   * the service's is (run_attempts, with the trace and video its writer stored), and begins the next
   * under an execution number of its own. Returns the next try's writer; null, recording nothing,
   * when the run was ended or taken over meanwhile.
   */
  readonly nextTry: (
    ended: RetriedOutcome,
    ran: { startedAt: Date; finishedAt: Date },
  ) => Promise<ArtifactWriter | null>;
  /** The worker's Playwright runtime (bundles, sandbox, egress); none in a worker without it. */
  readonly playwright: PlaywrightRuntime | undefined;
  /** Tells the lifecycle that the mask grew (a value the run typed into a password field). */
  readonly maskGrew: (mask: SecretMask) => void;
  /** Told once a cancelled attempt's context has been closed (benchmarks). */
  readonly contextCancelled: () => void;
  readonly logger: Logger;
  readonly limits: RunLimits;
  /** The worker's scratch directory: recordings pass through it on their way to the store. */
  readonly scratchDir: string;
  /** Longest the teardown (trace, context close, video) may take before it is abandoned. */
  readonly teardownMs: number;
  /**
   * Executes another run, claimed as a member of the Playwright batch `batchId` (its whole
   * lifecycle: claim, attempts, terminal write); resolves when it has ended.
   */
  readonly runBatched: (runId: string, batchId: string) => Promise<unknown>;
  /** Keeps this run's job (its worker slot) until `work` settles: a batch the attempt leads. */
  readonly holdJob: (work: Promise<unknown>) => void;
}

/** A run whose definition was read and whose secrets are open: ready for its attempt. */
export interface PreparedRun {
  /** Every secret value the run uses, masked in all it writes. */
  readonly mask: SecretMask;
  /**
   * True when the executor opens its own way out through the egress proxy (a Playwright sandbox's
   * listener, under the attempt's `policy`): the attempt then opens none for browser contexts, and
   * a context opened through `openContext` carries no proxy credentials (the proxy refuses it).
   */
  readonly ownEgress?: boolean;
  /** Runs the attempt and returns its outcome; records its steps and artifacts through the writer. */
  execute(attempt: ExecutorAttempt): Promise<RunOutcome>;
}

/** One kind of test's way of running an attempt. */
export interface Executor {
  /**
   * Reads the run's definition and opens its secrets; an outcome (an invalid definition, a secret
   * that does not open) ends the attempt before any network or browser is opened for it.
   */
  prepare(given: ExecutorRun): Promise<{ prepared: PreparedRun } | { outcome: RunOutcome }>;
}

/** The kind of a run's test: a Playwright test's definition is an object naming it, a step test's a list of steps. */
export function executorKind(run: RunRecord): ExecutorKind {
  return isPlaywrightDefinition(run.steps) ? 'playwright' : 'steps';
}
