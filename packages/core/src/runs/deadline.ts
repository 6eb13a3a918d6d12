// When the service itself ends a run that is still `running` (the reconciler's `deadline_at`), and
// how long a Playwright batch's sandbox may run: docs/WORKER.md, "Deadlines".

/**
 * A Playwright test's time is Playwright's: its config's `timeout`, `test.setTimeout`, `test.slow()`,
 * per try, its config's retries included, enforced by Playwright in the sandbox. The service's own
 * bounds are safety nets far behind it, there only for a sandbox or a worker that hangs.
 */
export const PLAYWRIGHT_TIME = {
  /** What a batch's sandbox adds to its wall clock for each of its tests (ten times Playwright's default `timeout`). */
  perTestWallMs: 5 * 60_000,
  /** The longest wall clock of any Playwright sandbox. */
  wallCapMs: 4 * 3_600_000,
  /**
   * A Playwright run's deadline, from its claim (its test's start): past the longest wall clock of
   * its sandbox, with room to record its result, so that Playwright's result, whenever it comes,
   * is the one recorded.
   */
  deadlineMs: 4 * 3_600_000 + 10 * 60_000,
} as const;

/** A batch's sandbox wall clock: `perTestWallMs` for each test, at least `aloneMs` (a test alone's), at most `wallCapMs`. */
export function playwrightBatchWallMs(tests: number, aloneMs: number): number {
  return Math.min(PLAYWRIGHT_TIME.wallCapMs, Math.max(aloneMs, tests * PLAYWRIGHT_TIME.perTestWallMs));
}

/** SQL: whether the row `r` is a Playwright run (its kind, `runs.kind`). */
export const IS_PLAYWRIGHT_RUN = `(r.kind = 'playwright')`;

/**
 * SQL: the deadline of the row `r`'s attempt starting now: a step test's time budget (`timeout_ms`),
 * which its worker enforces step by step; for a Playwright run, the safety net
 * `PLAYWRIGHT_TIME.deadlineMs` (its `timeout_ms` is not its time: Playwright's is).
 */
export const ATTEMPT_DEADLINE = `now() + make_interval(secs => (CASE WHEN ${IS_PLAYWRIGHT_RUN} THEN ${PLAYWRIGHT_TIME.deadlineMs} ELSE r.timeout_ms END) / 1000.0)`;
