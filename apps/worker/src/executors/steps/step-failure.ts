import { formatDuration } from '@testrun/contracts';
import { displayUrl, quote } from '../../support/text-format';
import { blockedMessage, type Refused } from '../../network/run-target';
import type { Comparison, StepProblem } from '../../run/step-outcome';

/**
 * Thrown by an action for an outcome it can name. `dueToTimeout` marks outcomes that only happen
 * because time ran out (element never appeared, expectation never held): when the test's deadline,
 * not the step's own timeout, ended the wait, the step is a `timeout` error instead.
 */
export class StepFailure extends Error {
  constructor(
    readonly problem: StepProblem,
    readonly dueToTimeout = false,
  ) {
    super(problem.message);
    this.name = 'StepFailure';
  }
}

export function expectationFailed(message: string, dueToTimeout: boolean, comparison?: Comparison): StepFailure {
  return new StepFailure(
    { outcome: 'failed', code: 'expectation_failed', message, reason: message, ...(comparison ? { comparison } : {}) },
    dueToTimeout,
  );
}

/** A screenshot differs from its baseline (`detail`: the comparator's words, `1234 pixels … are different.`). */
export function screenshotChanged(name: string, detail: string): StepFailure {
  const message = `${name} differs from its baseline: ${detail.replace(/\.$/, '')}`;
  return new StepFailure({ outcome: 'failed', code: 'screenshot_changed', message, reason: message });
}

export function elementNotFound(selector: string, stepTimeoutMs: number): StepFailure {
  const within = formatDuration(stepTimeoutMs);
  return new StepFailure(
    {
      outcome: 'failed',
      code: 'element_not_found',
      message: `element ${quote(selector)} not found within ${within}`,
      reason: `element not found within ${within}`,
    },
    true,
  );
}

/** The element exists but never became usable (hidden, disabled, covered, no such option...). */
export function elementNotReady(selector: string, what: string, stepTimeoutMs: number): StepFailure {
  const within = formatDuration(stepTimeoutMs);
  return new StepFailure(
    {
      outcome: 'failed',
      code: 'element_not_found',
      message: `element ${quote(selector)} was found but never became ready to ${what} within ${within}`,
      reason: `element never became ready to ${what} within ${within}`,
    },
    true,
  );
}

export function httpError(method: string, url: string, status: number): StepFailure {
  const message = `${method} ${displayUrl(url)} answered HTTP ${status}`;
  return new StepFailure({ outcome: 'failed', code: 'http_error', message, reason: message });
}

/** `detail` is the plain cause (`connection refused`), `url` where it happened. */
export function targetUnreachable(detail: string, url: string, technical?: string, dueToTimeout = false): StepFailure {
  const where = `${detail}: ${displayUrl(url)}`;
  return new StepFailure(
    {
      outcome: 'error',
      code: 'target_unreachable',
      message: technical ? `${where} (${technical})` : where,
      reason: `target unreachable (${where})`,
    },
    dueToTimeout,
  );
}

/**
 * The run's browser asked for a target the network policy refuses. Names the host and the rule
 * (`detail`), never anything the target answered or whether anything listens there.
 */
export function targetBlocked(refused: Refused): StepFailure {
  return new StepFailure({
    outcome: 'error',
    code: 'target_blocked',
    message: blockedMessage(refused),
    reason: `target blocked (${refused.detail})`,
  });
}

export function invalidDefinition(message: string): StepFailure {
  return new StepFailure({
    outcome: 'error',
    code: 'invalid_definition',
    message,
    reason: `invalid definition (${message})`,
  });
}

export function browserCrashed(detail: string): StepFailure {
  return new StepFailure({
    outcome: 'error',
    code: 'browser_crashed',
    message: `the page or browser closed while the step ran (${detail})`,
    reason: `browser crashed (${detail})`,
  });
}

export function internalError(detail: string): StepFailure {
  return new StepFailure({
    outcome: 'error',
    code: 'internal_error',
    message: detail,
    reason: `internal error (${detail})`,
  });
}

/** The run was cancelled while the step ran (its Playwright calls were aborted). */
export function stepCancelled(): StepProblem {
  return {
    outcome: 'error',
    code: 'cancelled',
    message: 'the run was cancelled during this step',
    reason: 'cancelled',
  };
}

/** Thrown by an action that waited until the deadline; executeStep words it as budgetExceeded. */
export function outOfTime(): StepFailure {
  return new StepFailure(budgetExceeded(undefined), true);
}

/** The test's time budget ran out before or during the step. */
export function budgetExceeded(budgetMs: number | undefined): StepProblem {
  const budget = budgetMs === undefined ? 'time budget' : `time budget of ${formatDuration(budgetMs)}`;
  return {
    outcome: 'error',
    code: 'timeout',
    message: `the test's ${budget} ran out during this step`,
    reason: `${budget} exceeded`,
  };
}

/** The step's own watchdog fired: the page stopped answering the browser (a busy loop, a hung renderer). */
export function stepHung(stepTimeoutMs: number): StepProblem {
  const within = formatDuration(stepTimeoutMs);
  return {
    outcome: 'error',
    code: 'timeout',
    message: `the step did not complete within ${within}: the page stopped responding`,
    reason: `step did not complete within ${within} (the page stopped responding)`,
  };
}
