import type { Locator, Page, Response } from 'playwright';
import type { Step, StepAction, StepOf } from '@testrun/contracts';
import { errorText, isFatalError, isTimeoutError } from './classify-error';
import { displayUrl, formatDuration, formatPattern, normalizeWhitespace, quote } from './format';
import {
  elementNotFound,
  elementNotReady,
  expectationFailed,
  httpError,
  invalidDefinition,
  outOfTime,
  StepFailure,
  targetUnreachable,
} from './step-failure';
import type { ActionContext, StepEffect } from './types';

/** One action of the step language: does the step or throws (a StepFailure when it can name why). */
export type StepActionFn<A extends StepAction> = (
  page: Page,
  step: StepOf<A>,
  ctx: ActionContext,
) => Promise<StepEffect | void>;
export type ActionTable = { readonly [A in StepAction]: StepActionFn<A> };

/** How often expectations re-read the page while they wait. */
const POLL_INTERVAL_MS = 100;
/** Upper bound of one read inside a poll, so one slow read cannot eat the whole step. */
const POLL_READ_TIMEOUT_MS = 1_000;
/**
 * Lower bound of one read: on a loaded machine the element count alone can take most of a short
 * step timeout, and a read given 1 ms would fail for no reason the page is to blame for.
 */
const POLL_READ_MIN_MS = 250;

/** Time left in the step, never 0: Playwright reads a timeout of 0 as "wait forever". */
export function timeLeft(ctx: ActionContext): number {
  return Math.max(1, ctx.endsAt - Date.now());
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));
}

/** Resolves a step URL against the run's base URL; only http(s) may be opened (no file://, no javascript:). */
export function resolveStepUrl(url: string, baseUrl: string): string {
  let resolved: URL;
  try {
    resolved = new URL(url, baseUrl);
  } catch {
    throw invalidDefinition(`URL ${quote(url)} cannot be resolved against the base URL ${quote(displayUrl(baseUrl))}`);
  }
  if (resolved.protocol !== 'http:' && resolved.protocol !== 'https:') {
    throw invalidDefinition(`URL ${quote(displayUrl(resolved.href))} is not http(s)`);
  }
  return resolved.href;
}

export function compilePattern(pattern: string, flags: string | undefined): RegExp {
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
    if (left <= 0) return { ok: false, lastError };
    await sleep(Math.min(POLL_INTERVAL_MS, left));
  }
}

/** Turns a Playwright error raised while acting on `selector` into the outcome a reader expects. */
async function explainElementError(
  error: unknown,
  locator: Locator,
  selector: string,
  what: string,
  ctx: ActionContext,
): Promise<unknown> {
  const text = errorText(error);
  const strict = /strict mode violation: .* resolved to (\d+) elements/.exec(text);
  if (strict)
    return expectationFailed(`expected ${quote(selector)} to match one element but it matched ${strict[1]}`, false);
  if (isTimeoutError(error)) {
    const count = await countQuickly(locator);
    return count ? elementNotReady(selector, what, ctx.stepTimeoutMs) : elementNotFound(selector, ctx.stepTimeoutMs);
  }
  // Playwright's injected script reports element-type problems as "Error: <reason>":
  // "Not a checkbox or radio button", "Element is not an <input>...": the page is not what the step expects.
  const injected = /^Error: (.+)$/.exec(text);
  if (injected && !isFatalError(error))
    return expectationFailed(`cannot ${what} ${quote(selector)}: ${injected[1]}`, false);
  return error;
}

/** Element count for a message; null when the page cannot answer quickly (it may be hung). */
async function countQuickly(locator: Locator): Promise<number | null> {
  const count = locator.count().catch(() => null);
  const giveUp = sleep(500).then(() => null);
  return Promise.race([count, giveUp]);
}

async function actOn(
  page: Page,
  selector: string,
  what: string,
  ctx: ActionContext,
  act: (locator: Locator, timeout: number) => Promise<unknown>,
): Promise<void> {
  const locator = page.locator(selector);
  try {
    await act(locator, timeLeft(ctx));
  } catch (error) {
    throw await explainElementError(error, locator, selector, what, ctx);
  }
}

/** Visible text of the one element, whitespace-normalised; textContent for non-HTML nodes (SVG). */
async function readText(locator: Locator, ctx: ActionContext): Promise<string> {
  const timeout = Math.max(
    1,
    Math.min(Math.max(timeLeft(ctx), POLL_READ_MIN_MS), POLL_READ_TIMEOUT_MS, ctx.deadline - Date.now()),
  );
  try {
    return normalizeWhitespace(await locator.innerText({ timeout }));
  } catch (error) {
    if (!/not an HTMLElement/i.test(errorText(error))) throw error;
    return normalizeWhitespace((await locator.textContent({ timeout })) ?? '');
  }
}

type ElementState =
  | { kind: 'unknown' }
  | { kind: 'absent' }
  | { kind: 'multiple'; count: number }
  | { kind: 'unreadable' }
  | { kind: 'text'; text: string };

async function goto(page: Page, step: StepOf<'goto'>, ctx: ActionContext): Promise<void> {
  const url = resolveStepUrl(step.url, ctx.baseUrl);
  // The main document's last response, kept because a failed navigation (an error status with an
  // empty body, a 401 challenge) rejects goto without handing the response back.
  let mainResponse: Response | null = null;
  const onResponse = (response: Response) => {
    const request = response.request();
    if (request.isNavigationRequest() && request.frame() === page.mainFrame()) mainResponse = response;
  };
  page.on('response', onResponse);
  try {
    const response = await page.goto(url, { waitUntil: 'load', timeout: timeLeft(ctx) });
    // null: same-document navigation (only the hash changed); nothing was fetched.
    if (response && response.status() >= 400)
      throw httpError(response.request().method(), response.url(), response.status());
  } catch (error) {
    if (error instanceof StepFailure) throw error;
    const explained = await explainNavigationError(error, page, url, mainResponse, ctx);
    if (explained !== RECOVERED) throw explained;
  } finally {
    page.off('response', onResponse);
  }
}

/** explainNavigationError's answer when the navigation did end well after all. */
const RECOVERED = Symbol('recovered');

const NET_ERRORS: ReadonlyArray<[RegExp, string]> = [
  [/^ERR_CONNECTION_REFUSED$/, 'connection refused'],
  [/^ERR_NAME_NOT_RESOLVED$|^ERR_NAME_RESOLUTION_FAILED$/, 'DNS lookup failed'],
  [/^ERR_CONNECTION_RESET$/, 'connection reset'],
  [/^ERR_CONNECTION_CLOSED$|^ERR_EMPTY_RESPONSE$/, 'connection closed without an answer'],
  [/^ERR_CONNECTION_TIMED_OUT$|^ERR_TIMED_OUT$/, 'connection timed out'],
  [
    /^ERR_ADDRESS_UNREACHABLE$|^ERR_NETWORK_UNREACHABLE$|^ERR_INTERNET_DISCONNECTED$|^ERR_ADDRESS_INVALID$/,
    'network unreachable',
  ],
  [/^ERR_CERT_|^ERR_SSL_|^ERR_BAD_SSL_|^ERR_TLS_/, 'TLS error'],
  [/^ERR_UNSAFE_PORT$/, 'port blocked by the browser as unsafe'],
  [/^ERR_TOO_MANY_REDIRECTS$/, 'too many redirects'],
];

async function explainNavigationError(
  error: unknown,
  page: Page,
  url: string,
  mainResponse: Response | null,
  ctx: ActionContext,
): Promise<unknown> {
  const text = errorText(error);
  if (mainResponse !== null) {
    const answered: Response = mainResponse;
    if (answered.status() >= 400) return httpError(answered.request().method(), answered.url(), answered.status());
  }
  const net = /net::(ERR_[A-Z0-9_]+)/.exec(text);
  if (net) {
    const code = net[1] as string;
    const detail = NET_ERRORS.find(([pattern]) => pattern.test(code))?.[1] ?? 'network error';
    return targetUnreachable(detail, url, `net::${code}`);
  }
  if (isTimeoutError(error)) {
    const within = `within ${formatDuration(ctx.stepTimeoutMs)}`;
    if (mainResponse === null) return targetUnreachable(`no answer ${within}`, url, undefined, true);
    return expectationFailed(`page ${displayUrl(url)} answered but did not finish loading ${within}`, true);
  }
  if (/interrupted by another navigation/i.test(text)) {
    // The page sent itself elsewhere while loading (a client-side redirect): wait for that page.
    await page.waitForLoadState('load', { timeout: timeLeft(ctx) }).catch(() => undefined);
    if (page.url().startsWith('chrome-error://')) return targetUnreachable('navigation failed', url);
    return RECOVERED;
  }
  if (/Download is starting/i.test(text))
    return expectationFailed(`${displayUrl(url)} started a download instead of showing a page`, false);
  return error;
}

async function waitForState(
  page: Page,
  selector: string,
  state: 'attached' | 'detached' | 'visible' | 'hidden',
  ctx: ActionContext,
  expectation: boolean,
): Promise<void> {
  const locator = page.locator(selector);
  try {
    await locator.waitFor({ state, timeout: timeLeft(ctx) });
  } catch (error) {
    if (!isTimeoutError(error)) throw await explainElementError(error, locator, selector, `be ${state}`, ctx);
    if (state === 'hidden' || state === 'detached') {
      const now = state === 'hidden' ? 'visible' : 'attached';
      throw expectationFailed(`expected ${quote(selector)} to be ${state} but it was still ${now}`, true);
    }
    const count = await countQuickly(locator);
    if (!count) throw elementNotFound(selector, ctx.stepTimeoutMs);
    if (expectation) throw expectationFailed(`expected ${quote(selector)} to be visible but it was hidden`, true);
    throw elementNotReady(selector, 'be visible', ctx.stepTimeoutMs);
  }
}

async function expectText(page: Page, step: StepOf<'expectText'>, ctx: ActionContext): Promise<void> {
  let wanted: string;
  let test: (text: string) => boolean;
  if (step.text !== undefined && step.pattern === undefined) {
    const expected = normalizeWhitespace(step.text);
    wanted = `contain ${quote(expected)}`;
    test = (text) => text.includes(expected);
  } else if (step.pattern !== undefined && step.text === undefined) {
    wanted = `match ${formatPattern(step.pattern, step.flags)}`;
    test = patternTester(step.pattern, step.flags);
  } else {
    throw invalidDefinition('expectText needs exactly one of text or pattern');
  }
  const locator = page.locator(step.selector);
  let state: ElementState = { kind: 'unknown' };
  const { ok, lastError } = await pollUntil(ctx, async () => {
    const count = await locator.count();
    if (count !== 1) {
      state = count === 0 ? { kind: 'absent' } : { kind: 'multiple', count };
      return false;
    }
    state = { kind: 'unreadable' };
    const text = await readText(locator, ctx);
    state = { kind: 'text', text };
    return test(text);
  });
  if (ok) return;
  const last = state as ElementState;
  switch (last.kind) {
    case 'unknown':
      throw lastError ?? elementNotFound(step.selector, ctx.stepTimeoutMs);
    case 'absent':
      throw elementNotFound(step.selector, ctx.stepTimeoutMs);
    case 'multiple':
      throw expectationFailed(
        `expected ${quote(step.selector)} to match one element but it matched ${last.count}`,
        true,
      );
    case 'unreadable':
      throw expectationFailed(
        `expected text of ${quote(step.selector)} to ${wanted} but its text could not be read`,
        true,
      );
    case 'text':
      throw expectationFailed(
        `expected text of ${quote(step.selector)} to ${wanted} but it was ${quote(last.text)}`,
        true,
      );
  }
}

async function expectUrl(page: Page, step: StepOf<'expectUrl'>, ctx: ActionContext): Promise<void> {
  let wanted: string;
  let test: (url: string) => boolean;
  if (step.url !== undefined && step.pattern === undefined) {
    const expected = resolveStepUrl(step.url, ctx.baseUrl);
    wanted = `be ${quote(displayUrl(expected))}`;
    test = (url) => sameUrl(url, expected);
  } else if (step.pattern !== undefined && step.url === undefined) {
    wanted = `match ${formatPattern(step.pattern, step.flags)}`;
    test = patternTester(step.pattern, step.flags);
  } else {
    throw invalidDefinition('expectUrl needs exactly one of url or pattern');
  }
  let actual = page.url();
  const { ok } = await pollUntil(ctx, async () => test((actual = page.url())));
  if (!ok) throw expectationFailed(`expected URL to ${wanted} but it was ${quote(displayUrl(actual), 300)}`, true);
}

function sameUrl(a: string, b: string): boolean {
  try {
    return new URL(a).href === new URL(b).href;
  } catch {
    return a === b;
  }
}

async function expectTitle(page: Page, step: StepOf<'expectTitle'>, ctx: ActionContext): Promise<void> {
  let wanted: string;
  let test: (title: string) => boolean;
  if (step.title !== undefined && step.pattern === undefined) {
    const expected = step.title;
    wanted = `be ${quote(expected)}`;
    test = (title) => title === expected;
  } else if (step.pattern !== undefined && step.title === undefined) {
    wanted = `match ${formatPattern(step.pattern, step.flags)}`;
    test = patternTester(step.pattern, step.flags);
  } else {
    throw invalidDefinition('expectTitle needs exactly one of title or pattern');
  }
  let actual: string | undefined;
  const { ok, lastError } = await pollUntil(ctx, async () => test((actual = await page.title())));
  if (ok) return;
  if (actual === undefined && lastError) throw lastError;
  throw expectationFailed(`expected title to ${wanted} but it was ${quote(actual ?? '')}`, true);
}

async function screenshot(page: Page, step: StepOf<'screenshot'>, ctx: ActionContext): Promise<StepEffect> {
  const fullPage = step.fullPage ?? false;
  const body = await page.screenshot({ type: 'png', fullPage, timeout: timeLeft(ctx) });
  return { kind: 'screenshot', name: step.name ?? null, contentType: 'image/png', body, fullPage };
}

/** Pauses for `ms` (bounded by the contract), but never past the test's deadline. */
async function wait(_page: Page, _step: StepOf<'wait'>, ctx: ActionContext): Promise<void> {
  await sleep(ctx.endsAt - Date.now());
  if (ctx.deadlineBound) throw outOfTime();
}

/** Every action of the step language, by name. */
export const ACTIONS: ActionTable = {
  goto,
  click: (page, step, ctx) => actOn(page, step.selector, 'click', ctx, (l, timeout) => l.click({ timeout })),
  fill: (page, step, ctx) => actOn(page, step.selector, 'fill', ctx, (l, timeout) => l.fill(step.value, { timeout })),
  press: async (page, step, ctx) => {
    if (step.selector === undefined) return page.keyboard.press(step.key);
    return actOn(page, step.selector, `press ${quote(step.key)} on`, ctx, (l, timeout) =>
      l.press(step.key, { timeout }),
    );
  },
  select: (page, step, ctx) => {
    const values = Array.isArray(step.value) ? step.value : [step.value];
    const what = `select ${values.map((v) => quote(v, 40)).join(', ')} in`;
    return actOn(page, step.selector, what, ctx, (l, timeout) => l.selectOption(values, { timeout }));
  },
  check: (page, step, ctx) => actOn(page, step.selector, 'check', ctx, (l, timeout) => l.check({ timeout })),
  uncheck: (page, step, ctx) => actOn(page, step.selector, 'uncheck', ctx, (l, timeout) => l.uncheck({ timeout })),
  hover: (page, step, ctx) => actOn(page, step.selector, 'hover', ctx, (l, timeout) => l.hover({ timeout })),
  waitFor: (page, step, ctx) => waitForState(page, step.selector, step.state ?? 'visible', ctx, false),
  expectText,
  expectVisible: (page, step, ctx) => waitForState(page, step.selector, 'visible', ctx, true),
  expectHidden: (page, step, ctx) => waitForState(page, step.selector, 'hidden', ctx, true),
  expectUrl,
  expectTitle,
  screenshot,
  wait,
};

/** Runs the action a step names; an action the table does not know is a definition error. */
export function runAction(page: Page, step: Step, ctx: ActionContext): Promise<StepEffect | void> {
  const action = (ACTIONS as Record<string, StepActionFn<StepAction> | undefined>)[step.action];
  if (!action) return Promise.reject(invalidDefinition(`unknown action ${quote(String(step.action))}`));
  return action(page, step as never, ctx);
}
