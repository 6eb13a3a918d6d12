import type { TargetPolicy } from '@testrun/core/target-policy';

/** What the caller knows about the run when it executes a step. */
export interface StepContext {
  /**
   * The run's effective base URL: the request's `baseUrl` when given, else the project's.
   * Relative `goto`/`expectUrl` URLs are resolved against it.
   */
  baseUrl: string;
  /**
   * When the test's time budget ends, in epoch milliseconds (`Date.now()` scale). No step waits
   * past it; a step that is cut off by it ends `error`/`timeout`.
   */
  deadline: number;
  /** The test's whole time budget in ms; only used to word the timeout message. Optional. */
  budgetMs?: number;
  /** The run's target network policy: a `goto` it refuses is never opened. Default: no check. */
  targetPolicy?: TargetPolicy;
  /**
   * Aborted when the run is cancelled: every Playwright call of the step is given it, so the step
   * ends at once and no call of its is still under way when its context is closed. Default none.
   */
  signal?: AbortSignal;
}

/** What an action gets: the run context plus this step's own time window. */
export interface ActionContext extends StepContext {
  /** The step's own timeout (`step.timeoutMs`, else the default), used in messages. */
  stepTimeoutMs: number;
  /** When this step must end, in epoch ms: the earlier of its own timeout and the deadline. */
  endsAt: number;
  /** True when the deadline, not the step's own timeout, sets `endsAt`. */
  deadlineBound: boolean;
}
