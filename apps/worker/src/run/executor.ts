// What an executor is: the part of a run that depends on how its test is defined. The run's
// lifecycle (claim, retried writes, secrets' mask, cancels, faults, retries, the terminal write:
// run/) is the same for every kind of test and calls the executor of the run's kind (runs.kind).
// An executor is made by its own module under executors/ with whatever it needs (a browser, an
// egress, a sandbox runtime); the lifecycle gives each attempt only what every kind uses.
import type { Db } from '@testrun/core/db';
import type { Logger } from '@testrun/core/logger';
import type { ClaimedRun, RetriedOutcome, RunOutcome } from '@testrun/core/runs';
import type { TargetPolicy } from '@testrun/core/target-policy';
import type { BrowserClock } from '../browser/browser-clock';
import type { ArtifactWriter } from './artifact-writer';
import type { Retrying } from './claim';
import type { SecretMask } from './secret-mask';

/** The executor of each kind of test, by the kind a run names (`runs.kind`): one registry entry a kind. */
export type Executors = Readonly<Record<string, Executor>>;

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

/** What every kind of executor is given for one attempt: built once, before it starts, and never changed. */
export interface ExecutorAttempt {
  readonly run: RunRecord;
  /** The attempt's execution number (its rows and artifacts are recorded under it). */
  readonly attempt: number;
  /** The only writer of the attempt's step rows and artifacts. */
  readonly writer: ArtifactWriter;
  /** Every browser call is awaited through it, to tell the worker's own time apart. */
  readonly clock: BrowserClock;
  /**
   * Aborted when the run is cancelled: the work under way has its calls aborted, nothing more
   * starts, and the attempt returns (its outcome becomes `cancelled` whatever it is).
   */
  readonly signal: AbortSignal;
  /** The run's target network policy (the deployment's narrowed by the workspace's); none without one. */
  readonly policy: TargetPolicy | undefined;
  readonly logger: Logger;
  /** Tells the lifecycle that the mask grew (a value the run typed into a password field). */
  readonly maskGrew: (mask: SecretMask) => void;
  /**
   * Tells the lifecycle how to stop the attempt's work under it (for an attempt that does not unwind
   * after a cancel or a fault), and `null` once the teardown has begun.
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
  /** Keeps this run's job (its worker slot) until `work` settles: work the attempt leads for other runs. */
  readonly holdJob: (work: Promise<unknown>) => void;
}

/** A run whose definition was read and whose secrets are open: ready for its attempt. */
export interface PreparedRun {
  /** Every secret value the run uses, masked in all it writes. */
  readonly mask: SecretMask;
  /** Runs the attempt and returns its outcome; records its steps and artifacts through the writer. */
  execute(attempt: ExecutorAttempt): Promise<RunOutcome>;
}

/** One kind of test's way of running an attempt. */
export interface Executor {
  /**
   * Reads the run's definition and opens its secrets; an outcome (an invalid definition, a secret
   * that does not open) ends the attempt before anything is opened for it.
   */
  prepare(given: ExecutorRun): Promise<{ prepared: PreparedRun } | { outcome: RunOutcome }>;
}

/**
 * Records a run as a member of a batch another run's attempt leads: its own lifecycle (claim under
 * the batch, attempts, terminal write) with `executor` for its attempts and the batch's target
 * policy, never its kind's executor; resolves when it has ended. The port an executor that shares
 * its work between runs is made with (run/execute-run.ts executeMember).
 */
export type RunMember = (runId: string, batch: MemberOf) => Promise<unknown>;

/** The batch a member run belongs to: its id, the target policy its leader read, the executor of its attempts. */
export type MemberOf = { id: string; policy: TargetPolicy | undefined; executor: Executor };

/**
 * What the jobs that bring runs to this worker tell an executor that waits for them (a Playwright
 * batch's leader waits for the runs on their way, executors/playwright/batch/arrivals.ts).
 */
export interface JobWatch {
  /** A slot of the worker took a job: its run is on its way. */
  took(runId: string): void;
  /** The run was claimed: its kind is known. */
  claimed(run: RunRecord): void;
  /** The run's execution returned (whatever it did): it is no longer on its way. */
  executed(runId: string): void;
  /** The job ended (after any work its run held it for): its slot is free. */
  freed(): void;
}
