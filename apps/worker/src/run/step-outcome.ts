// What one step of a run came to, in the words every part of the lifecycle uses: the artifact
// writer records it, the secrets' mask covers it, the run's outcome is summed up from it.
import type { RunErrorCode, RunFailureCode } from '@testrun/contracts';

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
