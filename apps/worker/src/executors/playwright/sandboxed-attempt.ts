// What the Playwright executor is made with (executors/index.ts) and what each of its attempts runs
// with: the lifecycle's attempt, and the worker's scratch directory and run limits.
import type { ExecutorAttempt, RunMember } from '../../run/executor';
import { DEFAULT_RUN_LIMITS, type RunLimits } from '../../run/run-limits';
import type { PlaywrightRuntime } from './playwright-runtime';
import type { VisualStore } from './store-visual';

/** What the Playwright executor is made with. */
export interface PlaywrightExecutorDeps {
  /** Bundles, sandbox and egress of Playwright runs (service/playwright-tasks.ts). None: its runs end `error`. */
  runtime: PlaywrightRuntime | undefined;
  /** The worker's scratch directory: each sandbox's files pass through a folder of it. */
  scratchDir: string;
  /** What each run's recordings and attachments may use. Default {@link DEFAULT_RUN_LIMITS}. */
  limits?: RunLimits | undefined;
  /** Executes a run as a member of a batch this worker leads (the lifecycle's port, run/executor.ts). */
  runMember: RunMember;
}

/** A Playwright attempt: the lifecycle's, with the worker's scratch directory and the run's limits. */
export interface SandboxedAttempt extends ExecutorAttempt {
  readonly scratchDir: string;
  readonly limits: RunLimits;
  /** Where what its test's snapshots found is kept (docs/VISUAL.md); none without Playwright. */
  readonly visual: VisualStore | undefined;
}

/** The lifecycle's attempt as the Playwright executor runs it. */
export function sandboxedAttempt(deps: PlaywrightExecutorDeps, attempt: ExecutorAttempt): SandboxedAttempt {
  return {
    ...attempt,
    scratchDir: deps.scratchDir,
    limits: deps.limits ?? DEFAULT_RUN_LIMITS,
    visual: deps.runtime?.visual,
  };
}
