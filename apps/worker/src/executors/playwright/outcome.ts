import type { PlaywrightAttempt, PlaywrightError, PlaywrightStatus, PlaywrightStep } from './types';

/** A test's outcome: the status, the code (docs/WORKER.md, "Playwright tests: outcomes") and the summary. */
export interface PlaywrightOutcome {
  status: PlaywrightStatus;
  code: string | null;
  skipReason?: 'skipped_in_code' | 'browser_unavailable';
  summary: string;
}

/** Terminal colours (ESC [ … m), which Playwright may leave in messages. */
const ANSI = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, 'g');

export function stripAnsi(text: string): string {
  return text.replace(ANSI, '');
}
const CRASHED = /Target crashed|Page crashed|page has crashed|browser has disconnected|Browser closed/i;
const UNREACHABLE =
  /net::ERR_(?!ABORTED\b|BLOCKED_BY)[A-Z_]+|\b(ECONNREFUSED|ENOTFOUND|EAI_AGAIN|ECONNRESET|EHOSTUNREACH|ENETUNREACH|CERT_[A-Z_]+|DEPTH_ZERO_SELF_SIGNED_CERT)\b/;
/** An action or wait on the page that timed out: the element never became usable. */
const ACTION_TIMEOUT =
  /^((Timeout)?Error: )?(locator|page|frame|elementHandle)\.(?!goto|reload|goBack|goForward|waitForURL|waitForLoadState|waitForNavigation|waitForResponse|waitForRequest|waitForEvent|waitForTimeout|waitForFunction)\w+: Timeout \d+ms exceeded/;
const EXPECT = /^(Error: )?expect\(/;
/** A navigation or API request the target did not answer in time (as step tests: target_unreachable). */
const NAVIGATION_TIMEOUT =
  /^((Timeout)?Error: )?((page|frame)\.(goto|reload|goBack|goForward)|apiRequestContext\.\w+): Timeout \d+ms exceeded/;

function firstLine(text: string): string {
  return text.replace(ANSI, '').trim().split('\n')[0] ?? '';
}

function where(location: { file: string; line: number } | undefined): string {
  return location ? ` (${location.file}:${location.line})` : '';
}

/** The deepest step that failed, in order, and the number of the top-level step it is under. */
export function failingStep(steps: readonly PlaywrightStep[]): { step: PlaywrightStep; number: number } | null {
  let number = 0;
  for (const top of steps) {
    if (top.category === 'hook' || top.category === 'fixture') {
      if (top.error) return { step: deepest(top), number: 0 };
      continue;
    }
    number += 1;
    if (top.error) return { step: deepest(top), number };
  }
  return null;
}

function deepest(step: PlaywrightStep): PlaywrightStep {
  const child = step.steps.find((s) => s.error);
  return child ? deepest(child) : step;
}

/** Why a failed attempt failed, from its first error and the step that failed. */
function failureCode(error: PlaywrightError | undefined, step: PlaywrightStep | undefined): string {
  const message = (error?.message ?? '').replace(ANSI, '').trim();
  if (CRASHED.test(message)) return 'browser_crashed';
  if (step?.category === 'expect' || EXPECT.test(message)) return 'expectation_failed';
  if (UNREACHABLE.test(message) || NAVIGATION_TIMEOUT.test(message)) return 'target_unreachable';
  if (ACTION_TIMEOUT.test(message)) return 'element_not_found';
  return 'test_code_error';
}

const FAILED_CODES = new Set(['expectation_failed', 'element_not_found', 'unexpected_pass']);

/** The summary of a failure: the failing step by number and title, the error's first line, file and line. */
function failureSummary(attempt: PlaywrightAttempt, prefix: string): string {
  const error = attempt.errors[0];
  const failing = failingStep(attempt.steps);
  const location = error?.location ?? failing?.step.location;
  const message = firstLine(error?.message ?? failing?.step.error?.message ?? 'unknown error');
  if (!failing) return `${prefix}: ${message}${where(location)}`;
  const step = failing.number > 0 ? `step ${failing.number}` : failing.step.category;
  return `${prefix} at ${step} (${failing.step.title}): ${message}${where(location)}`;
}

/**
 * The outcome of a test's last attempt. `blocked`: the detail of a request the network policy
 * refused while it ran (it wins over anything the test made of the refusal).
 */
export function classifyAttempt(attempt: PlaywrightAttempt, blocked: string | null = null): PlaywrightOutcome {
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
  if (blocked !== null)
    return { status: 'error', code: 'target_blocked', summary: `Blocked by the network policy: ${blocked}` };
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
  const failing = failingStep(attempt.steps);
  const code = failureCode(attempt.errors[0], failing?.step);
  return {
    status: FAILED_CODES.has(code) ? 'failed' : 'error',
    code,
    summary: failureSummary(attempt, 'Failed'),
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
 * stopped it: the test's code killed it (it alone runs in the sandbox beside it).
 */
export function runnerKilled(): PlaywrightOutcome {
  return {
    status: 'error',
    code: 'test_code_error',
    summary: "The test's code killed the Playwright runner: it stopped while the test ran, without its result",
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

/** The config or a spec did not load, or the test is no longer in the bundle. */
export function invalidDefinition(message: string): PlaywrightOutcome {
  return { status: 'error', code: 'invalid_definition', summary: `The tests did not load: ${firstLine(message)}` };
}

export function browserUnavailable(browser: string): PlaywrightOutcome {
  return {
    status: 'skipped',
    code: null,
    skipReason: 'browser_unavailable',
    summary: `Its project runs ${browser}; this service runs Chromium only`,
  };
}
