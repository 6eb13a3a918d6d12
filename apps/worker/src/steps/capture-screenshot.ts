import type { Page } from 'playwright';

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
 */
export async function captureScreenshot(page: Page, options: CaptureScreenshotOptions = {}): Promise<Buffer | null> {
  if (page.isClosed()) return null;
  const timeoutMs = options.timeoutMs ?? 3_000;
  let timer: NodeJS.Timeout | undefined;
  const giveUp = new Promise<null>((resolve) => {
    timer = setTimeout(() => resolve(null), timeoutMs + 250);
  });
  const shot = page
    .screenshot({ type: 'jpeg', quality: options.quality ?? 70, timeout: timeoutMs, caret: 'hide' })
    .catch(() => null);
  try {
    return await Promise.race([shot, giveUp]);
  } finally {
    clearTimeout(timer);
  }
}
