import type { RunErrorCode, RunFailureCode, SkipReason } from '@testrun/contracts';

// Durations come from contracts' formatDuration, the one rule for the view, summaries and the CLI.

/** A UTC timestamp people can read without JavaScript; `<time datetime>` carries the exact instant. */
export function formatInstant(date: Date): string {
  return `${date.toISOString().slice(0, 19).replace('T', ' ')} UTC`;
}

export function formatBytes(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(0)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

/** Words for the machine codes a run carries; a code added to contracts must get its words here. */
const CODE_WORDS: Record<RunErrorCode | RunFailureCode | SkipReason, string> = {
  target_unreachable: 'Target unreachable',
  browser_crashed: 'Browser crashed',
  invalid_definition: 'Invalid test definition',
  timeout: 'Timed out',
  worker_lost: 'Worker lost',
  internal_error: 'Internal error',
  target_blocked: 'Target blocked by the network policy',
  resource_limit: 'Resource limit reached',
  expectation_failed: 'Expectation failed',
  element_not_found: 'Element not found',
  http_error: 'HTTP error',
  unexpected_pass: 'Passed, but marked test.fail()',
  screenshot_changed: 'Screenshot changed',
  test_code_error: "Error in the test's code",
  setup_failed: 'Setup project failed',
  test_disabled: 'Test disabled',
  cancelled: 'Cancelled',
  skipped_in_code: 'Skipped in code',
  browser_unavailable: 'Browser unavailable',
};

function isKnownCode(code: string): code is keyof typeof CODE_WORDS {
  return Object.hasOwn(CODE_WORDS, code);
}

/** The words for a code; an unknown one (a row older than the closed set) is shown spelled out. */
export function describeCode(code: string): string {
  return isKnownCode(code) ? CODE_WORDS[code] : code.replace(/_/g, ' ');
}

/** Credentials in a URL's userinfo (`https://user:pass@host`) are secrets: never shown. */
export function redactCredentials(text: string): string {
  return text.replace(/([a-z][a-z0-9+.-]*:\/\/)[^\s/?#@]+@/gi, '$1***@');
}
