import { stripVTControlCharacters } from 'node:util';
import { STEP_LIMITS, type Step } from '@testrun/contracts';
import { quote, truncate } from '../../support/text-format';
import { browserCrashed, internalError, invalidDefinition, stepHung, StepFailure } from './step-failure';

/**
 * The useful first line of a Playwright error: no ANSI colours, no call log, no `locator.click: `
 * prefix (the step label already says what was done).
 */
export function errorText(error: unknown): string {
  const raw = error instanceof Error ? error.message : String(error);
  const firstLine = stripVTControlCharacters(raw).split('\n')[0] ?? '';
  return truncate(firstLine.replace(/^[A-Za-z]+\.[A-Za-z]+: /, '').trim(), 300);
}

/**
 * Playwright's `errors.TimeoutError` and the like, told by name: every TimeoutError Playwright makes
 * is named so, and testing the name keeps Playwright itself from loading with this module.
 */
export function isTimeoutError(error: unknown): boolean {
  return error instanceof Error && error.name === 'TimeoutError';
}

const CLOSED =
  /Target page, context or browser has been closed|Target closed|Target crashed|Page crashed|Browser has been closed|Browser closed|browser has disconnected|Connection closed|has been closed/i;

function isClosedError(error: unknown): boolean {
  return error instanceof Error && CLOSED.test(error.message);
}

const BAD_SELECTOR =
  /while parsing (?:css )?selector|InvalidSelectorError|is not a valid (?:XPath expression|selector)|Unknown engine|Unsupported selector|selector cannot be empty|Failed to execute '(?:evaluate|querySelector(?:All)?)'/i;

function isSelectorError(error: unknown): boolean {
  return error instanceof Error && BAD_SELECTOR.test(error.message);
}

function isUnknownKeyError(error: unknown): boolean {
  return error instanceof Error && /Unknown key: /.test(error.message);
}

/** Errors no retry can fix: a poll loop gives up on these at once. */
export function isFatalError(error: unknown): boolean {
  return error instanceof StepFailure || isClosedError(error) || isSelectorError(error);
}

/**
 * Names what went wrong for an error an action did not name itself. Anything unrecognised is an
 * `internal_error`: it is a fault of ours or of Playwright, never blamed on the product.
 */
export function classifyError(error: unknown, step: Step): StepFailure {
  if (error instanceof StepFailure) return error;
  const text = errorText(error);
  if (isClosedError(error)) return browserCrashed(text);
  if (isSelectorError(error)) {
    const selector = 'selector' in step && typeof step.selector === 'string' ? step.selector : '';
    return invalidDefinition(`selector ${quote(selector)} is not valid: ${text}`);
  }
  if (isUnknownKeyError(error)) return invalidDefinition(`key is not valid: ${text}`);
  // A Playwright timeout no action explained (a screenshot of a page too busy to paint).
  if (isTimeoutError(error)) return new StepFailure(stepHung(step.timeoutMs ?? STEP_LIMITS.defaultStepTimeoutMs), true);
  return internalError(text || 'unexpected error');
}
