import type { ReportTest } from '@testrun/contracts';

/** How a test that did not pass is written: the element, its `type` and its `message`. */
export type JunitVerdict = { element: 'failure' | 'error'; type: string; message: string };

/** The outcome codes of a Playwright test's own failure or error (not the service's: a lost worker, a refused request…). */
const PLAYWRIGHT_OWN = new Set([
  'expectation_failed',
  'element_not_found',
  'unexpected_pass',
  'screenshot_changed',
  'test_code_error',
  'timeout',
]);

/**
 * A Playwright test's error as Playwright's junit reporter classifies it (its `classifyResultError`):
 * an `expect(…).matcher` error is a `<failure type="expect.matcher">`, any other an
 * `<error type="Name">` (its `Name: ` prefix, else `Error`), the message its first line without
 * that prefix.
 */
function classifyPlaywrightError(raw: string): JunitVerdict {
  const named = /^(\w+): /.exec(raw);
  const body = named ? raw.slice(named[0].length) : raw;
  const message = (body.split('\n')[0] ?? '').trim();
  const matcher = /expect\(.*?\)\.(not\.)?(\w+)/.exec(raw);
  if (matcher) return { element: 'failure', type: `expect.${matcher[1] ?? ''}${matcher[2] ?? ''}`, message };
  return { element: 'error', type: named?.[1] ?? 'Error', message };
}

/**
 * How a test that ended `failed` or `error` is written. A Playwright test's own failure is
 * classified as Playwright's reporter does, from its error in full when the CLI read it (its last
 * attempt's; Playwright takes its first try's, the same error for a test that failed every try
 * alike); otherwise, and for the
 * service's own errors, the run's status decides: `failed` a `<failure>`, `error` an `<error>`
 * typed with the error's code.
 */
export function junitVerdict(t: ReportTest): JunitVerdict {
  const code = t.error?.code ?? null;
  const own = t.location && (t.status === 'failed' || (code !== null && PLAYWRIGHT_OWN.has(code)));
  if (own) {
    const raw = t.failure?.message ?? t.error?.message;
    if (raw) return classifyPlaywrightError(raw);
  }
  const message = t.result_summary ?? t.status;
  return t.status === 'failed'
    ? { element: 'failure', type: 'failed', message }
    : { element: 'error', type: code ?? 'error', message };
}
