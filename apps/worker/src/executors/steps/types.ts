import type { RunErrorCode, RunFailureCode } from '@testrun/contracts';
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

/** A side result the caller must act on after a step passed. */
interface ScreenshotEffect {
  kind: 'screenshot';
  /** The step's `name`, when it has one; the caller names the artifact otherwise. */
  name: string | null;
  contentType: 'image/png';
  body: Buffer;
  fullPage: boolean;
}
export type StepEffect = ScreenshotEffect;

/** An image taken after a step, for the timeline. */
export type StepShot = { body: Buffer; contentType: string; name: string };

/** Error codes a single step can produce (`worker_lost` belongs to the run, not to a step). */
type StepErrorCode = Exclude<RunErrorCode, 'worker_lost'>;

/**
 * What a failed expectation wanted and what the page had, in full (the message quotes them cut
 * short): the view shows them side by side, with the difference marked.
 */
export type Comparison = { subject: 'text' | 'url' | 'title'; expected: string; received: string };

/** Why a step did not pass: `failed` = the product misbehaved, `error` = the run could not complete. */
export type StepProblem =
  | { outcome: 'failed'; code: RunFailureCode; message: string; reason: string; comparison?: Comparison }
  | { outcome: 'error'; code: StepErrorCode; message: string; reason: string };

interface StepTiming {
  durationMs: number;
  startedAt: Date;
  /** A short description of what the step acted on: a selector, a resolved URL, `500 ms`. */
  target: string;
}

/**
 * The result of one step. `message` is self-contained (timeline, `run.error.message`); `reason` is
 * the shorter phrase that follows the step label in the run's one-sentence summary.
 */
export type StepOutcomeResult =
  | (StepTiming & { outcome: 'passed'; code?: undefined; message?: undefined; reason?: undefined; effect?: StepEffect })
  | (StepTiming & StepProblem & { effect?: undefined });
