// What the attempt's guards make of a step's result: a page that went past a limit, or a request
// the network policy refused while the step ran, decide its outcome whatever the step itself saw.
import type { LimitViolation } from '../../browser/page-guard';
import type { Refused } from '../../network/run-target';
import type { StepOutcomeResult } from '../../run/step-outcome';
import { targetBlocked } from './step-failure';

/**
 * The step's result once the run's browser asked for a blocked target while it ran: whatever the
 * step saw (the proxy's refusal page, a failed request, or nothing at all for a blocked image), it
 * ends `error`/`target_blocked` naming the first blocked host and rule.
 */
export function withBlockedRequest(
  result: StepOutcomeResult,
  blocked: readonly Refused[] | undefined,
): StepOutcomeResult {
  const first = blocked?.[0];
  if (first === undefined) return result;
  if (result.outcome === 'error' && result.code === 'target_blocked') return result;
  const { durationMs, startedAt, target } = result;
  return { ...targetBlocked(first).problem, durationMs, startedAt, target };
}

/**
 * A step's result once the guard had its say: a step during which the page went past a limit
 * ends `error`/`resource_limit`, whatever the step itself saw (mostly its page being closed).
 */
export function applyViolation(result: StepOutcomeResult, violation: LimitViolation | null): StepOutcomeResult {
  if (!violation) return result;
  const { durationMs, startedAt, target } = result;
  return {
    outcome: 'error',
    code: 'resource_limit',
    message: `the page ${violation.detail}; the run was stopped`,
    reason: `resource limit reached (the page ${violation.detail})`,
    durationMs,
    startedAt,
    target,
  };
}
