import type { RunOutcome } from '@testrun/core/runs';
import { flakySummary, retriedOutcome } from './retry-policy';

const failed: RunOutcome = { status: 'failed', code: 'expectation_failed', resultSummary: 'Failed at step 3 (x): y' };

describe('retriedOutcome', () => {
  it('retries a failed attempt while retries remain', () => {
    expect(retriedOutcome(failed, 0, 2)).toBe(failed);
    expect(retriedOutcome(failed, 1, 2)).toBe(failed);
    expect(retriedOutcome(failed, 2, 2)).toBeNull();
    expect(retriedOutcome(failed, 0, 0)).toBeNull();
  });

  it('retries an error that may pass, not one a retry cannot change', () => {
    const timeout: RunOutcome = { status: 'error', code: 'timeout', resultSummary: 'Error: time budget exceeded.' };
    const invalid: RunOutcome = { status: 'error', code: 'invalid_definition', resultSummary: 'Error: invalid.' };
    expect(retriedOutcome(timeout, 0, 1)).toBe(timeout);
    expect(retriedOutcome(invalid, 0, 1)).toBeNull();
  });

  it('never retries a passed or skipped attempt', () => {
    expect(retriedOutcome({ status: 'passed', resultSummary: 'Passed.' }, 0, 3)).toBeNull();
    expect(
      retriedOutcome({ status: 'skipped', skipReason: 'test_disabled', resultSummary: 'Skipped.' }, 0, 3),
    ).toBeNull();
  });
});

describe('flakySummary', () => {
  it('says which retry passed and what the first attempt did', () => {
    expect(flakySummary('Passed: 3 steps in 1.2 s.', 1, 2, 'Failed at step 3 (expect text "a"): not found')).toBe(
      'Passed on retry 1 of 2; the first attempt failed at step 3 (expect text "a"): not found. Passed: 3 steps in 1.2 s.',
    );
    expect(flakySummary('Passed: 1 step in 1 s.', 1, 1, 'Error: the browser could not be started for this run.')).toBe(
      'Passed on retry 1 of 1; the first attempt ended in error: the browser could not be started for this run. Passed: 1 step in 1 s.',
    );
  });

  it("names a Playwright config's retries, which the run's own retries do not count", () => {
    expect(flakySummary('Passed', 1, null, 'Failed at step 2 (Expect "toHaveText"): x')).toBe(
      'Passed on retry 1 (its Playwright config\'s retries); the first attempt failed at step 2 (Expect "toHaveText"): x. Passed',
    );
  });
});
