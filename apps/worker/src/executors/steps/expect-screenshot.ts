import type { Page, PageScreenshotOptions } from 'playwright';
import type { StepOf } from '@testrun/contracts';
import { formatDuration } from '@testrun/contracts';
import { explainElementError } from './element-errors';
import { pngComparator } from './screenshot-comparator';
import { settleScreenshot } from './settle-screenshot';
import { expectationFailed, internalError, screenshotChanged } from './step-failure';
import { callOptions } from './time-left';
import type { ActionContext } from './types';

// The `expectScreenshot` action (docs/VISUAL.md, "Step tests"): the page (or one element) settled
// and compared with its baseline as Playwright's toHaveScreenshot does, with Playwright's comparator.
// A match keeps nothing; a screenshot without a baseline becomes one, awaiting approval, and passes;
// one that differs fails the step `screenshot_changed`, its images kept with the run.

/**
 * Compares a screenshot with the baseline of its name. Playwright's toHaveScreenshot defaults:
 * animations disabled, caret hidden, CSS pixels, the viewport unless `fullPage`.
 */
export async function expectScreenshot(
  page: Page,
  step: StepOf<'expectScreenshot'>,
  ctx: ActionContext,
): Promise<undefined> {
  if (!ctx.visual) throw internalError('this worker keeps no baselines for step tests');
  const compare = pngComparator();
  if (!compare) throw internalError("the worker's Playwright has no screenshot comparator where one was looked for");
  const baseline = await ctx.visual.baseline(step.name);
  const options = {
    threshold: step.threshold,
    maxDiffPixels: step.maxDiffPixels,
    maxDiffPixelRatio: step.maxDiffPixelRatio,
  };
  const target = step.selector === undefined ? null : page.locator(step.selector);
  const settings: PageScreenshotOptions = {
    type: 'png',
    animations: 'disabled',
    caret: 'hide',
    scale: 'css',
    ...(step.mask ? { mask: step.mask.map((selector) => page.locator(selector)) } : {}),
    ...(target ? {} : { fullPage: step.fullPage ?? false }),
  };
  const shoot = () => {
    const shot = { ...settings, ...callOptions(ctx) };
    return target ? target.screenshot(shot) : page.screenshot(shot);
  };
  let settled;
  try {
    settled = await settleScreenshot({
      shoot,
      differ: (actual, expected) => compare(actual, expected, options),
      expected: baseline.expected,
      endsAt: ctx.endsAt,
      ...(ctx.signal ? { signal: ctx.signal } : {}),
    });
  } catch (error) {
    if (target === null || step.selector === undefined) throw error;
    throw await explainElementError(error, target, step.selector, 'take a screenshot of', ctx);
  }
  switch (settled.kind) {
    case 'matched':
      return;
    case 'taken':
      ctx.visual.keepNew(baseline, settled.actual);
      return;
    case 'different':
      ctx.visual.keepChanged(baseline, settled);
      throw screenshotChanged(baseline.name, settled.message);
    case 'unstable':
      throw expectationFailed(
        `the page did not hold still for ${baseline.name}: no two screenshots in a row were the same within ${formatDuration(ctx.stepTimeoutMs)}`,
        true,
      );
  }
}
