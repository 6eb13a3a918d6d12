import type { Locator } from 'playwright';
import { withTimeout } from '@testrun/core/with-timeout';
import { errorText, isFatalError, isTimeoutError } from './classify-error';
import { quote } from '../../support/text-format';
import { elementNotFound, elementNotReady, expectationFailed } from './step-failure';
import type { ActionContext } from './types';

// What a Playwright error raised while acting on an element means to the reader of a step.

/** How long an element count for a message may take: the page may be hung. */
const COUNT_TIMEOUT_MS = 500;

/** Turns a Playwright error raised while acting on `selector` into the outcome a reader expects. */
export async function explainElementError(
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

/** Element count for a message; null when the page cannot answer quickly. */
export async function countQuickly(locator: Locator): Promise<number | null> {
  return withTimeout(locator.count(), COUNT_TIMEOUT_MS, 'counting the elements').catch(() => null);
}
