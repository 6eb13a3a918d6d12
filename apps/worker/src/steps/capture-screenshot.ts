import type { Page } from 'playwright';
import { withTimeout } from '@testrun/core';

/** Options of {@link captureScreenshot}. */
export interface CaptureScreenshotOptions {
  /** Longest the capture may take; a hung page must not hold up the run. Default 3000 ms. */
  timeoutMs?: number;
  /** JPEG quality, 1–100. Default 70: timeline images stay small and readable. */
  quality?: number;
}

/** Slack past Playwright's own timeout, so that its answer wins when the page does answer. */
const CAPTURE_GRACE_MS = 250;

/**
 * The viewport as JPEG, for the step timeline. Never throws: null when the page is gone, crashed
 * or does not answer within the timeout, so a missing picture never changes a run's outcome.
 */
export async function captureScreenshot(page: Page, options: CaptureScreenshotOptions = {}): Promise<Buffer | null> {
  if (page.isClosed()) return null;
  const timeoutMs = options.timeoutMs ?? 3_000;
  const shot = page.screenshot({ type: 'jpeg', quality: options.quality ?? 70, timeout: timeoutMs, caret: 'hide' });
  return withTimeout(shot, timeoutMs + CAPTURE_GRACE_MS, 'the timeline screenshot').catch(() => null);
}
