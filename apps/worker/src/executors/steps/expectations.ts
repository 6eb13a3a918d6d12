import type { Locator, Page } from 'playwright';
import type { StepOf } from '@testrun/contracts';
import { errorText, isFatalError } from './classify-error';
import { displayUrl, formatPattern, normalizeWhitespace, quote } from '../../support/text-format';
import { resolveStepUrl } from './navigate';
import { elementNotFound, expectationFailed, invalidDefinition } from './step-failure';
import { sleep, timeLeft } from './time-left';
import type { ActionContext } from './types';

/** How often expectations re-read the page while they wait. */
const POLL_INTERVAL_MS = 100;
/** Upper bound of one read inside a poll, so one slow read cannot eat the whole step. */
const POLL_READ_TIMEOUT_MS = 1_000;
/**
 * Lower bound of one read: on a loaded machine the element count alone can take most of a short
 * step timeout, and a read given 1 ms would fail for no reason the page is to blame for.
 */
const POLL_READ_MIN_MS = 250;

function compilePattern(pattern: string, flags: string | undefined): RegExp {
  try {
    return new RegExp(pattern, flags);
  } catch (error) {
    throw invalidDefinition(
      `pattern ${formatPattern(pattern, flags)} is not a valid regular expression: ${errorText(error)}`,
    );
  }
}

/** Matches afresh on every call: a `g` or `y` flag would otherwise carry lastIndex between polls. */
function patternTester(pattern: string, flags: string | undefined): (value: string) => boolean {
  compilePattern(pattern, flags);
  return (value) => new RegExp(pattern, flags).test(value);
}

/**
 * What an expectation waits for: a phrase for its message, the value or pattern as the view's
 * "expected" shows it, and the test of each reading.
 */
type Wanted = { wanted: string; expected: string; test: (value: string) => boolean };

/** Exactly one of `exact` or `pattern`: the expectation's phrase and test, or a definition error. */
function wantedOf(
  action: string,
  field: string,
  exact: { value: string | undefined; phrase: (v: string) => string; test: (v: string) => (actual: string) => boolean },
  pattern: string | undefined,
  flags: string | undefined,
): Wanted {
  if (exact.value !== undefined && pattern === undefined)
    return { wanted: exact.phrase(exact.value), expected: exact.value, test: exact.test(exact.value) };
  if (pattern !== undefined && exact.value === undefined) {
    const shown = formatPattern(pattern, flags);
    return { wanted: `match ${shown}`, expected: shown, test: patternTester(pattern, flags) };
  }
  throw invalidDefinition(`${action} needs exactly one of ${field} or pattern`);
}

/**
 * Re-runs `attempt` until it returns true or the step's time is up. Transient errors (a navigation
 * destroying the execution context mid-read) are retried; fatal ones end the step at once.
 */
async function pollUntil(
  ctx: ActionContext,
  attempt: () => Promise<boolean>,
): Promise<{ ok: boolean; lastError?: unknown }> {
  let lastError: unknown;
  for (;;) {
    try {
      if (await attempt()) return { ok: true };
      lastError = undefined;
    } catch (error) {
      if (isFatalError(error)) throw error;
      lastError = error;
    }
    const left = ctx.endsAt - Date.now();
    if (left <= 0 || ctx.signal?.aborted || ctx.stepEnded.aborted) return { ok: false, lastError };
    await sleep(Math.min(POLL_INTERVAL_MS, left), ctx.signal, ctx.stepEnded);
  }
}

/** Visible text of the one element, whitespace-normalised; textContent for non-HTML nodes (SVG). */
async function readText(locator: Locator, ctx: ActionContext): Promise<string> {
  const timeout = Math.max(
    1,
    Math.min(Math.max(timeLeft(ctx), POLL_READ_MIN_MS), POLL_READ_TIMEOUT_MS, ctx.deadline - Date.now()),
  );
  try {
    return normalizeWhitespace(await locator.innerText({ timeout, signal: ctx.signal }));
  } catch (error) {
    if (!/not an HTMLElement/i.test(errorText(error))) throw error;
    return normalizeWhitespace((await locator.textContent({ timeout, signal: ctx.signal })) ?? '');
  }
}

type ElementState =
  | { kind: 'unknown' }
  | { kind: 'absent' }
  | { kind: 'multiple'; count: number }
  | { kind: 'unreadable' }
  | { kind: 'text'; text: string };

export async function expectText(page: Page, step: StepOf<'expectText'>, ctx: ActionContext): Promise<undefined> {
  const { wanted, expected, test } = wantedOf(
    'expectText',
    'text',
    {
      value: step.text === undefined ? undefined : normalizeWhitespace(step.text),
      phrase: (text) => `contain ${quote(text)}`,
      test: (text) => (actual) => actual.includes(text),
    },
    step.pattern,
    step.flags,
  );
  const locator = page.locator(step.selector);
  let state: ElementState = { kind: 'unknown' };
  const { ok, lastError } = await pollUntil(ctx, async () => {
    const count = await locator.count();
    if (count !== 1) {
      state = count === 0 ? { kind: 'absent' } : { kind: 'multiple', count };
      return false;
    }
    // A read cut short by the deadline keeps the text an earlier poll read: the failure then quotes
    // what the page last showed rather than saying it could not be read.
    if (state.kind !== 'text') state = { kind: 'unreadable' };
    const text = await readText(locator, ctx);
    state = { kind: 'text', text };
    return test(text);
  });
  if (ok) return;
  // Assigned inside the poll's callback, which control flow analysis does not follow.
  const last = state as ElementState;
  const what = `text of ${quote(step.selector)} to ${wanted}`;
  switch (last.kind) {
    case 'unknown':
      if (lastError instanceof Error) throw lastError;
      throw elementNotFound(step.selector, ctx.stepTimeoutMs);
    case 'absent':
      throw elementNotFound(step.selector, ctx.stepTimeoutMs);
    case 'multiple':
      throw expectationFailed(
        `expected ${quote(step.selector)} to match one element but it matched ${last.count}`,
        true,
      );
    case 'unreadable':
      throw expectationFailed(`expected ${what} but its text could not be read`, true);
    case 'text':
      throw expectationFailed(`expected ${what} but it was ${quote(last.text)}`, true, {
        subject: 'text',
        expected,
        received: last.text,
      });
  }
}

export async function expectUrl(page: Page, step: StepOf<'expectUrl'>, ctx: ActionContext): Promise<undefined> {
  const { wanted, expected, test } = wantedOf(
    'expectUrl',
    'url',
    {
      value: step.url === undefined ? undefined : resolveStepUrl(step.url, ctx.baseUrl),
      phrase: (url) => `be ${quote(displayUrl(url))}`,
      test: (url) => (actual) => sameUrl(actual, url),
    },
    step.pattern,
    step.flags,
  );
  let actual = page.url();
  const { ok } = await pollUntil(ctx, () => Promise.resolve(test((actual = page.url()))));
  if (!ok)
    throw expectationFailed(`expected URL to ${wanted} but it was ${quote(displayUrl(actual), 300)}`, true, {
      subject: 'url',
      expected: step.url === undefined ? expected : displayUrl(expected),
      received: displayUrl(actual),
    });
}

function sameUrl(a: string, b: string): boolean {
  try {
    return new URL(a).href === new URL(b).href;
  } catch {
    return a === b;
  }
}

export async function expectTitle(page: Page, step: StepOf<'expectTitle'>, ctx: ActionContext): Promise<undefined> {
  const { wanted, expected, test } = wantedOf(
    'expectTitle',
    'title',
    { value: step.title, phrase: (title) => `be ${quote(title)}`, test: (title) => (actual) => actual === title },
    step.pattern,
    step.flags,
  );
  let actual: string | undefined;
  const { ok, lastError } = await pollUntil(ctx, async () => test((actual = await page.title())));
  if (ok) return;
  if (actual === undefined && lastError instanceof Error) throw lastError;
  throw expectationFailed(`expected title to ${wanted} but it was ${quote(actual ?? '')}`, true, {
    subject: 'title',
    expected,
    received: actual ?? '',
  });
}
