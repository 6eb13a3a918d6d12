import type { PlaywrightOutcome } from './outcome';
import type { PlaywrightAttempt, PlaywrightTestResult, RefusedRequest } from './types';

/** A test's result from its attempts, its last attempt's steps, errors and attachments. */
export function resultOf(
  key: string,
  outcome: PlaywrightOutcome,
  attempts: PlaywrightAttempt[],
  blocked: readonly RefusedRequest[],
): PlaywrightTestResult {
  const last = attempts[attempts.length - 1];
  return {
    key,
    ...outcome,
    durationMs: attempts.reduce((sum, a) => sum + a.durationMs, 0),
    steps: last?.steps ?? [],
    errors: last?.errors ?? [],
    attachments: last?.attachments ?? [],
    stdout: last?.stdout ?? '',
    stderr: last?.stderr ?? '',
    attempts,
    blocked,
  };
}
