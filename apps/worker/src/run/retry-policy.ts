import type { RunErrorCode } from '@testrun/contracts';
import type { RetriedOutcome, RunOutcome } from '@testrun/core/runs';

/**
 * Error codes a retry cannot change: the same definition fails the same way on every attempt; and
 * a cancelled attempt, which ends its run (the worker turns any attempt that did not pass under a
 * cancel into `cancelled` before this decision).
 * A run ended from outside its worker (worker lost) never reaches the retry decision at all.
 */
const NOT_RETRIED: ReadonlySet<RunErrorCode> = new Set<RunErrorCode>(['invalid_definition', 'cancelled']);

/**
 * Whether an attempt that ended as `outcome` is attempted again, with `retry` (0-based index of
 * this attempt) of `retries` allowed: a failed attempt, or one ended in error for a reason that may
 * pass. Passed and skipped attempts are final.
 */
export function retriedOutcome(outcome: RunOutcome, retry: number, retries: number): RetriedOutcome | null {
  if (retry >= retries) return null;
  if (outcome.status === 'failed') return outcome;
  if (outcome.status === 'error' && !(outcome.code && NOT_RETRIED.has(outcome.code))) return outcome;
  return null;
}

/**
 * The result summary of a run that passed on retry `retry` of `retries`, saying what the first
 * attempt did: `Passed on retry 1 of 2; the first attempt failed at step 3 (…): …`. `retries` null:
 * the test's own runner retried it (a Playwright config's retries), which the service does not count.
 */
export function flakySummary(passed: string, retry: number, retries: number | null, first: string | null): string {
  const why = first ? `; the first attempt ${lowerFirst(first.replace(/\.$/, ''))}` : '';
  const of = retries === null ? " (its Playwright config's retries)" : ` of ${retries}`;
  return `Passed on retry ${retry}${of}${why}. ${passed}`;
}

/** "Failed at step 3 …" → "failed at step 3 …"; "Error: …" → "ended in error: …". */
function lowerFirst(summary: string): string {
  if (summary.startsWith('Error')) return `ended in error${summary.slice('Error'.length)}`;
  return summary.charAt(0).toLowerCase() + summary.slice(1);
}
