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
  /**
   * The baselines of the run's `expectScreenshot` steps, and where what they find is kept (one per
   * attempt, run-baselines.ts). Default none: such a step ends `error`/`internal_error`.
   */
  visual?: StepVisuals;
}

/** A screenshot's baseline as an `expectScreenshot` step compares with it. */
export interface StepBaseline {
  /** The screenshot's file name (`home.png`): its visual change's and its images' name. */
  name: string;
  /** Its baseline's path (core's stepBaselinePath). */
  path: string;
  /** The baseline's image; null when there is none yet. */
  expected: Buffer | null;
}

/** What `expectScreenshot` needs of the run's baselines. */
export interface StepVisuals {
  /** The baseline of screenshot `name` of the run's test (the run's baselines are read at the first call). */
  baseline(name: string): Promise<StepBaseline>;
  /** Keeps a screenshot that has no baseline: it becomes one, awaiting approval. */
  keepNew(baseline: StepBaseline, actual: Buffer): void;
  /** Keeps a screenshot that differs from its baseline, and the images of the difference. */
  keepChanged(baseline: StepBaseline, found: { actual: Buffer; diff: Buffer | null }): void;
}

/** What an action gets: the run context plus this step's own time window. */
export interface ActionContext extends StepContext {
  /** The step's own timeout (`step.timeoutMs`, else the default), used in messages. */
  stepTimeoutMs: number;
  /** When this step must end, in epoch ms: the earlier of its own timeout and the deadline. */
  endsAt: number;
  /** True when the deadline, not the step's own timeout, sets `endsAt`. */
  deadlineBound: boolean;
  /**
   * Aborted once the step has its outcome: a page that closed or crashed, or the watchdog, can end
   * it while the action still waits, and what it waits on (a `wait` step's timer) ends with it.
   */
  stepEnded: AbortSignal;
}
