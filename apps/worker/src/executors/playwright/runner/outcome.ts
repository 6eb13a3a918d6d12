import { changedSnapshot, missingBaselinesSummary, newBaselinesSummary, onlyNewBaselines } from './snapshots';
import { failedOnRefusal, others, refusedNote } from './refused';
import { stripAnsi } from './strip-ansi';
import type {
  MissingBaselines,
  PlaywrightAttempt,
  PlaywrightError,
  PlaywrightStatus,
  PlaywrightStep,
  RefusedRequest,
} from './types';

/** A test's outcome: the status, the code (docs/WORKER.md, "Playwright tests: outcomes") and the summary. */
export interface PlaywrightOutcome {
  status: PlaywrightStatus;
  code: string | null;
  skipReason?: 'skipped_in_code' | 'browser_unavailable';
  summary: string;
}

const CRASHED = /Target crashed|Page crashed|page has crashed|browser has disconnected|Browser closed/i;
const UNREACHABLE =
  /net::ERR_(?!ABORTED\b|BLOCKED_BY)[A-Z_]+|\b(ECONNREFUSED|ENOTFOUND|EAI_AGAIN|ECONNRESET|EHOSTUNREACH|ENETUNREACH|CERT_[A-Z_]+|DEPTH_ZERO_SELF_SIGNED_CERT)\b/;
/** An action or wait on the page that timed out: the element never became usable. */
const ACTION_TIMEOUT =
  /^((Timeout)?Error: )?(locator|page|frame|elementHandle)\.(?!goto|reload|goBack|goForward|waitForURL|waitForLoadState|waitForNavigation|waitForResponse|waitForRequest|waitForEvent|waitForTimeout|waitForFunction)\w+: Timeout \d+ms exceeded/;
/** An `expect`, as Playwright words it now (`expect(locator).toBeVisible() failed`) and before 1.50 (`Timed out 5000ms waiting for expect(…)`). */
const EXPECT = /^(Error: )?(Timed out \d+ms waiting for )?expect\(/;
/**
 * An `expect` on a locator that matched no element until its timeout: Playwright says `Error:
 * element(s) not found` (`Received: <element(s) not found>` before 1.50). The element never
 * appeared, as a locator action that timed out waiting for it.
 */
const NO_ELEMENT = /^(Error: element\(s\) not found|Received: <element\(s\) not found>)\s*$/m;
/** A navigation or API request the target did not answer in time (as step tests: target_unreachable). */
const NAVIGATION_TIMEOUT =
  /^((Timeout)?Error: )?((page|frame)\.(goto|reload|goBack|goForward)|apiRequestContext\.\w+): Timeout \d+ms exceeded/;

/**
 * A timeout Playwright words without the call's name (`TimeoutError: Timeout 500ms exceeded.`, as it
 * reports an action's error while it traces): its call log says what it waited for, an element
 * (`- waiting for locator('#missing')`, `getByRole(…)`) or a navigation (`- navigating to "…"`).
 */
const BARE_TIMEOUT = /^((Timeout)?Error: )?Timeout \d+ms exceeded/;
const WAITED_FOR_ELEMENT = /^\s*- waiting for (locator|getBy[A-Za-z]+|frameLocator|selector)\b/m;
const WAITED_FOR_NAVIGATION = /^\s*- navigating to /m;

/** What a timeout without the call's name timed out on, by its call log; null when it says neither. */
function bareTimeoutCode(message: string): string | null {
  if (!BARE_TIMEOUT.test(message)) return null;
  if (WAITED_FOR_NAVIGATION.test(message)) return 'target_unreachable';
  return WAITED_FOR_ELEMENT.test(message) ? 'element_not_found' : null;
}

function firstLine(text: string): string {
  return stripAnsi(text).trim().split('\n')[0] ?? '';
}

function where(location: { file: string; line: number } | undefined): string {
  return location ? ` (${location.file}:${location.line})` : '';
}

/** Rows of a step's subtree below it (the step table numbers the whole tree depth first from 1). */
const rowsUnder = (step: PlaywrightStep): number => step.steps.reduce((sum, s) => sum + 1 + rowsUnder(s), 0);

/** The deepest step on the first failing path, and its row in the step table (../record-result.ts stepRows). */
export function failingStep(steps: readonly PlaywrightStep[]): { step: PlaywrightStep; number: number } | null {
  let number = 0;
  const visit = (list: readonly PlaywrightStep[]): PlaywrightStep | null => {
    for (const step of list) {
      number += 1;
      if (step.error) return (step.steps.some((s) => s.error) ? visit(step.steps) : null) ?? step;
      number += rowsUnder(step);
    }
    return null;
  };
  const step = visit(steps);
  return step ? { step, number } : null;
}

/** Why a failed attempt failed, from its first error and the step that failed. */
function failureCode(error: PlaywrightError | undefined, step: PlaywrightStep | undefined): string {
  const message = stripAnsi(error?.message ?? step?.error?.message ?? '').trim();
  if (CRASHED.test(message)) return 'browser_crashed';
  if (step?.category === 'expect' || EXPECT.test(message))
    return NO_ELEMENT.test(message) ? 'element_not_found' : 'expectation_failed';
  if (UNREACHABLE.test(message) || NAVIGATION_TIMEOUT.test(message)) return 'target_unreachable';
  if (ACTION_TIMEOUT.test(message)) return 'element_not_found';
  return bareTimeoutCode(message) ?? 'test_code_error';
}

const FAILED_CODES = new Set(['expectation_failed', 'element_not_found', 'unexpected_pass', 'screenshot_changed']);

/** The summary of a failure: the failing step by number and title, the error's first line, file and line. */
function failureSummary(attempt: PlaywrightAttempt, prefix: string): string {
  const error = attempt.errors[0];
  const failing = failingStep(attempt.steps);
  const location = error?.location ?? failing?.step.location;
  const message = firstLine(error?.message ?? failing?.step.error?.message ?? 'unknown error');
  if (!failing) return `${prefix}: ${message}${where(location)}`;
  return `${prefix} at step ${failing.number} (${failing.step.title}): ${message}${where(location)}`;
}

/**
 * The outcome of a test's last attempt, as `playwright test` would judge it, and the requests the
 * network policy refused while it ran (`blocked`): named in the summary whatever the verdict, and
 * the verdict (`error`/`target_blocked`) only when the test failed on one of them ({@link failedOnRefusal}).
 */
export function classifyAttempt(
  attempt: PlaywrightAttempt,
  blocked: readonly RefusedRequest[] = [],
  missingBaselines: MissingBaselines = 'pass',
): PlaywrightOutcome {
  const own = ownOutcome(attempt, missingBaselines);
  if (blocked.length === 0 || own.status === 'skipped') return own;
  const first = blocked[0] as RefusedRequest;
  const step = failingStep(attempt.steps)?.step;
  if (own.status !== 'passed' && own.code !== null && failedOnRefusal(attempt, step, own.code, blocked))
    return {
      status: 'error',
      code: 'target_blocked',
      summary: `Blocked by the network policy: ${first.host}:${first.port} (${first.detail})${others(blocked.length - 1)}`,
    };
  return { ...own, summary: `${own.summary}; ${refusedNote(blocked)}` };
}

/**
 * The test's own verdict: what `playwright test` says of its last attempt, but for a snapshot
 * without a baseline, which fails it only when the project says `missingBaselines: fail`.
 */
function ownOutcome(attempt: PlaywrightAttempt, missingBaselines: MissingBaselines): PlaywrightOutcome {
  if (attempt.status === 'skipped') {
    const note = attempt.annotations.find((a) => a.type === 'skip' || a.type === 'fixme');
    return {
      status: 'skipped',
      code: null,
      skipReason: 'skipped_in_code',
      // No skip annotation: Playwright skipped it itself, after a failure in its serial group.
      summary: note
        ? note.description || 'Skipped in code'
        : 'Skipped by Playwright: an earlier test of its serial group did not pass',
    };
  }
  const expectedFailure = attempt.expectedStatus === 'failed';
  if (attempt.status === 'passed' && !expectedFailure) return { status: 'passed', code: null, summary: 'Passed' };
  if (attempt.status === 'passed')
    return { status: 'failed', code: 'unexpected_pass', summary: 'Marked test.fail(), but it passed' };
  if (attempt.status === 'failed' && expectedFailure)
    return { status: 'passed', code: null, summary: 'Failed as test.fail() expects' };
  if (attempt.status === 'timedOut')
    return { status: 'error', code: 'timeout', summary: failureSummary(attempt, 'Timed out') };
  if (attempt.status === 'interrupted')
    return { status: 'error', code: 'timeout', summary: 'Interrupted before it ended' };
  const fresh = onlyNewBaselines(attempt);
  if (fresh !== null && missingBaselines === 'fail')
    return { status: 'failed', code: 'expectation_failed', summary: missingBaselinesSummary(fresh) };
  if (fresh !== null) return { status: 'passed', code: null, summary: newBaselinesSummary(fresh) };
  const failing = failingStep(attempt.steps);
  const code = changedSnapshot(attempt) ? 'screenshot_changed' : failureCode(attempt.errors[0], failing?.step);
  return {
    status: FAILED_CODES.has(code) ? 'failed' : 'error',
    code,
    summary: failureSummary(attempt, code === 'screenshot_changed' ? 'Screenshot changed' : 'Failed'),
  };
}

/** A selected test that depends on a setup test that failed, so it could not run. */
export function setupFailed(setupName: string, setupSummary: string): PlaywrightOutcome {
  return { status: 'error', code: 'setup_failed', summary: `Setup test "${setupName}" failed: ${setupSummary}` };
}

/** Each sandbox limit (sandbox/supervise.ts's SandboxLimit) as a summary names it. */
const LIMIT_NAMES: Readonly<Record<string, string>> = {
  memory: 'memory limit',
  pids: 'process limit (processes and threads)',
  time: 'wall-clock limit',
  output: 'output limit',
  disk: 'disk limit (its scratch space)',
};

/** A selected test the sandbox stopped, or one that reached a limit of the sandbox while it ran. */
export function limitHit(limit: string): PlaywrightOutcome {
  return {
    status: 'error',
    code: 'resource_limit',
    summary: `The sandbox's ${LIMIT_NAMES[limit] ?? `${limit} limit`} was hit before the test ended`,
  };
}

/** A test whose result (one line of the reporter's) was over what the worker reads of one. */
export function resultTooLarge(maxBytes: number): PlaywrightOutcome {
  const mib = Math.round(maxBytes / (1024 * 1024));
  return {
    status: 'error',
    code: 'resource_limit',
    summary: `The sandbox's output limit was hit: the test's result (its steps, errors, annotations and output) was over ${mib} MiB`,
  };
}

/**
 * The Playwright runner stopped while the test ran, without reporting its result, and no limit
 * stopped it: the test's code killed it (it alone runs in the sandbox beside it). `seen: false`:
 * it stopped after the tests loaded and before it reported any test's begin (killed that fast).
 */
export function runnerKilled(seen = true): PlaywrightOutcome {
  return {
    status: 'error',
    code: 'test_code_error',
    summary: seen
      ? "The test's code killed the Playwright runner: it stopped while the test ran, without its result"
      : "A test's code killed the Playwright runner: it stopped after the tests loaded, before it reported which test ran, and no limit was hit",
  };
}

/** A selected test that never ran: the runner was killed while an earlier test of its batch ran. */
export function runnerKilledBefore(name: string): PlaywrightOutcome {
  return {
    status: 'error',
    code: 'test_code_error',
    summary: `Not run: the code of "${name}", which ran before it, killed the Playwright runner`,
  };
}

/** A load error's first line; under the place Node prints above a module's SyntaxError, the error's line and that place. */
function loadErrorLine(message: string): string {
  const lines = stripAnsi(message).trim().split('\n');
  const first = lines[0] ?? '';
  const error = /^\S+:\d+$/.test(first) ? lines.find((line) => /^[A-Za-z]*Error\b/.test(line)) : undefined;
  return error ? `${error.trim()} (${first.replace(/^file:\/\//, '').replace(/^.*?\/bundle\//, '')})` : first;
}

/** The config or a spec did not load, or the test is no longer in the bundle. */
export function invalidDefinition(message: string): PlaywrightOutcome {
  return { status: 'error', code: 'invalid_definition', summary: `The tests did not load: ${loadErrorLine(message)}` };
}

export function browserUnavailable(browser: string): PlaywrightOutcome {
  return {
    status: 'skipped',
    code: null,
    skipReason: 'browser_unavailable',
    summary: `Its project runs ${browser}; this service runs Chromium only`,
  };
}
