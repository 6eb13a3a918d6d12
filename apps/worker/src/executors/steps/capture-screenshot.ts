import type { Page } from 'playwright';
import { keepsEvidence, type EvidenceMode } from '@testrun/contracts';
import { withTimeout } from '@testrun/core/with-timeout';
import { pageSession } from '../../browser/page-devtools';
import type { SecretMask } from '../../run/secret-mask';
import type { StepOutcomeResult, StepShot } from '../../run/step-outcome';

/** Options of {@link captureScreenshot}. */
export interface CaptureScreenshotOptions {
  /** Longest the capture may take; a hung page must not hold up the run. Default 3000 ms. */
  timeoutMs?: number;
  /** JPEG quality, 1–100. Default 70: timeline images stay small and readable. */
  quality?: number;
}

/**
 * The viewport as JPEG, for the step timeline. Never throws: null when the page is gone, crashed
 * or does not answer within the timeout, so a missing picture never changes a run's outcome.
 *
 * Taken with one DevTools call on the page's own session (`Page.captureScreenshot`, a new frame of
 * the page as it is), not with `page.screenshot`: that one also runs a script in every frame before
 * and after the capture (to hide carets and pause animations) and waits for the page's fonts, three
 * more round trips to the page after every step for a picture that needs none of them; and a
 * DevTools call is no action of the run's trace, where the test's own steps alone belong.
 */
export async function captureScreenshot(page: Page, options: CaptureScreenshotOptions = {}): Promise<Buffer | null> {
  if (page.isClosed()) return null;
  const timeoutMs = options.timeoutMs ?? 3_000;
  const shot = (async () => {
    const session = await pageSession(page);
    const { data } = await session.send('Page.captureScreenshot', { format: 'jpeg', quality: options.quality ?? 70 });
    return Buffer.from(data, 'base64');
  })();
  return withTimeout(shot, timeoutMs, 'the timeline screenshot').catch(() => null);
}

/** Screenshots of the timeline never hold a step up longer than this, nor less. */
const TIMELINE_SHOT_MAX_MS = 3_000;
const TIMELINE_SHOT_MIN_MS = 500;

/** What {@link timelineShot} needs to know about the step that just ran. */
export interface TimelineShotInput {
  /** 1-based index of the step. */
  index: number;
  result: StepOutcomeResult;
  /** The run's `screenshots` mode: `on` after every step, `on-failure` after the failing one, `off` never. */
  mode: EvidenceMode;
  /** When the test's time budget ends (epoch ms); the capture may run a little past it, never far. */
  deadline: number;
  /** Masks secret values out of the name of a screenshot step's picture. */
  mask: Pick<SecretMask, 'text'>;
  /** Times the capture as browser work. */
  time: <T>(work: Promise<T>) => Promise<T>;
}

/**
 * The image after a step: a screenshot step's own picture (kept in every mode, it is what the step
 * is for), else a quick JPEG of the viewport when the run's `screenshots` mode keeps one for this
 * step (every step when `on`, only a step that did not pass when `on-failure`), else none.
 */
export async function timelineShot(page: Page, input: TimelineShotInput): Promise<StepShot | null> {
  const { index, result } = input;
  if (result.effect) {
    const { body, contentType, name } = result.effect;
    return { body, contentType, name: `${safeName(input.mask.text(name ?? `step-${index}`))}.png` };
  }
  if (!keepsEvidence(input.mode, result.outcome === 'passed')) return null;
  const left = input.deadline + 2_000 - Date.now();
  const timeoutMs = Math.min(TIMELINE_SHOT_MAX_MS, Math.max(TIMELINE_SHOT_MIN_MS, left));
  const body = await input.time(captureScreenshot(page, { timeoutMs }));
  return body ? { body, contentType: 'image/jpeg', name: `step-${index}.jpg` } : null;
}

/** A screenshot step's name as a file name. */
function safeName(name: string): string {
  return (
    name
      .replace(/[^A-Za-z0-9_.-]+/g, '-')
      .replace(/^[.-]+/, '')
      .slice(0, 80) || 'screenshot'
  );
}
