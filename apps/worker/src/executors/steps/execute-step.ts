import type { Page } from 'playwright';
import { STEP_LIMITS, type Step } from '@testrun/contracts';
import { TimeoutError, withTimeout } from '@testrun/core/with-timeout';
import { runAction } from './actions';
import { classifyError } from './classify-error';
import { describeTarget } from '../../run/describe-step';
import { browserCrashed, budgetExceeded, stepCancelled, stepHung, type StepFailure } from './step-failure';
import type { StepEffect, StepOutcomeResult, StepProblem } from '../../run/step-outcome';
import type { ActionContext, StepContext } from './types';

export { captureScreenshot, timelineShot } from './capture-screenshot';
export type { StepContext } from './types';

/**
 * How long past its own timeout a step may run before the watchdog gives up on it. Playwright
 * honours its timeouts itself; the watchdog is for a page that stopped answering (a busy loop)
 * and gets a little slack so that Playwright's own, more precise error wins when it comes.
 */
const STEP_WATCHDOG_GRACE_MS = 1_500;

/** What the watchdog's TimeoutError names: tells it apart from any other timeout. */
const WATCHED_STEP = 'the step';

/**
 * Runs one step on `page` and names its outcome. Never throws: every problem becomes a `failed`
 * or `error` result with a code from contracts and a message a person can act on. The step never
 * waits past `ctx.deadline`; the caller should close the page's context once the run is over,
 * which also ends anything the page was still doing.
 */
export async function executeStep(page: Page, step: Step, ctx: StepContext): Promise<StepOutcomeResult> {
  const startedAt = new Date();
  const start = startedAt.getTime();
  const target = safeTarget(step, ctx.baseUrl);
  const finish = (result: { outcome: 'passed'; effect?: StepEffect } | StepProblem): StepOutcomeResult => {
    const timing = { durationMs: Date.now() - start, startedAt, target };
    if (result.outcome !== 'passed') return { ...result, ...timing };
    return result.effect ? { outcome: 'passed', effect: result.effect, ...timing } : { outcome: 'passed', ...timing };
  };

  const remaining = ctx.deadline - start;
  if (ctx.signal?.aborted) return finish(stepCancelled());
  if (remaining <= 0) return finish(budgetExceeded(ctx.budgetMs));
  if (page.isClosed()) return finish(browserCrashed('the page was already closed').problem);

  const stepTimeoutMs = step.timeoutMs ?? STEP_LIMITS.defaultStepTimeoutMs;
  // A wait step is bounded by its own length, not by the element timeout.
  const ownBudget = step.action === 'wait' ? step.ms : stepTimeoutMs;
  const deadlineBound = remaining < ownBudget;
  const stepEnded = new AbortController();
  const actionCtx: ActionContext = {
    ...ctx,
    stepTimeoutMs,
    endsAt: start + Math.min(ownBudget, remaining),
    deadlineBound,
    stepEnded: stepEnded.signal,
  };

  const watchdogMs = (deadlineBound ? ctx.deadline : actionCtx.endsAt + STEP_WATCHDOG_GRACE_MS) - Date.now();
  const watch = watchPage(page);

  try {
    const action = runAction(page, step, actionCtx);
    const effect = await withTimeout(Promise.race([action, watch.gone]), watchdogMs, WATCHED_STEP);
    return finish(effect ? { outcome: 'passed', effect } : { outcome: 'passed' });
  } catch (error) {
    return finish(explainProblem(error, step, actionCtx, ctx));
  } finally {
    watch.stop();
    stepEnded.abort();
  }
}

/**
 * Rejects when the page crashes or closes: that does not always reject the pending Playwright call
 * (it may wait for its timeout instead), so the page's own events end the step at once.
 */
function watchPage(page: Page): { gone: Promise<never>; stop: () => void } {
  let reject: (reason: StepFailure) => void = () => undefined;
  const gone = new Promise<never>((_, rejectGone) => {
    reject = rejectGone;
  });
  const onCrash = () => {
    reject(browserCrashed('the page crashed'));
  };
  const onClose = () => {
    reject(browserCrashed('the page was closed'));
  };
  page.once('crash', onCrash);
  page.once('close', onClose);
  return {
    gone,
    stop: () => {
      page.off('crash', onCrash);
      page.off('close', onClose);
    },
  };
}

function explainProblem(error: unknown, step: Step, actionCtx: ActionContext, ctx: StepContext): StepProblem {
  // Whatever the aborted call made of it (an AbortError, a read cut short), the run was cancelled.
  if (ctx.signal?.aborted) return stepCancelled();
  if (error instanceof TimeoutError && error.what === WATCHED_STEP) {
    return actionCtx.deadlineBound ? budgetExceeded(ctx.budgetMs) : stepHung(actionCtx.stepTimeoutMs);
  }
  const failure = classifyError(error, step);
  // Ran out of time, and the deadline (not the step's own timeout) is what ran out.
  if (failure.dueToTimeout && actionCtx.deadlineBound) return budgetExceeded(ctx.budgetMs);
  return failure.problem;
}

function safeTarget(step: Step, baseUrl: string): string {
  try {
    return describeTarget(step, baseUrl);
  } catch {
    return typeof step.action === 'string' ? step.action : 'step';
  }
}
