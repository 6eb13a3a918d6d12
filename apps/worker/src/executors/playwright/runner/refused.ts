// Requests the network policy refused while a Playwright test ran (the egress proxy's reports), as
// its outcome names them: the verdict when the test failed on one, else a note of its summary
// (outcome.ts, classifyAttempt).
import type { PlaywrightAttempt, PlaywrightStep, RefusedRequest } from './types';

/** The sentence a summary ends with when the network policy refused requests that are not the verdict. */
export function refusedNote(blocked: readonly RefusedRequest[]): string {
  const first = blocked[0];
  if (!first) return '';
  const count = blocked.length === 1 ? 'a request' : `${blocked.length} requests`;
  return `the network policy refused ${count} while it ran (the first: ${first.host}:${first.port}, ${first.detail})`;
}

/** `; and 2 more requests`: the refusals a verdict names after its first. */
export function others(count: number): string {
  return count === 0 ? '' : `; and ${count} more request${count === 1 ? '' : 's'}`;
}

/** What the egress proxy answers a refused plain-HTTP request with (network/proxy-wire.ts, BLOCKED_BODY). */
const REFUSAL_PAGE = /This request was blocked by the target network policy/;

/**
 * Codes a refusal can be the cause of: a failed navigation or request, an `expect` or a locator
 * on what the proxy answered, or an error of the test's own that reports the refused request.
 * A timeout, a crash, `unexpected_pass` and every limit stay what they are.
 */
const REFUSABLE_CODES = new Set(['target_unreachable', 'expectation_failed', 'element_not_found', 'test_code_error']);

/**
 * Whether the test failed on a refused request: its code is one a refusal can cause, and the error
 * it failed on (its first error, or that of `step`, the failing one) names a refused host (the URL of the
 * `page.goto` or `request.get` that failed with the proxy's refusal, `net::ERR_TUNNEL_CONNECTION_FAILED
 * at https://…`, or a request's call log `→ GET http://…  ← 403 Forbidden`) or quotes the proxy's
 * refusal page; or a page of the test was left on a refused host's URL (`testrun:page-url`
 * annotations: the page showed the proxy's refusal, not the target) and it failed on the page.
 */
export function failedOnRefusal(
  attempt: Pick<PlaywrightAttempt, 'errors' | 'annotations'>,
  step: PlaywrightStep | undefined,
  code: string,
  blocked: readonly RefusedRequest[],
): boolean {
  if (!REFUSABLE_CODES.has(code)) return false;
  const texts = [attempt.errors[0]?.message, step?.error?.message].filter((t): t is string => t !== undefined);
  if (texts.some((text) => REFUSAL_PAGE.test(text) || blocked.some((b) => namesHost(text, b.host)))) return true;
  if (code === 'test_code_error') return false;
  const pages = attempt.annotations.filter((a) => a.type === PAGE_URL_ANNOTATION).map((a) => a.description ?? '');
  return pages.some((url) => blocked.some((b) => hostOf(url) === b.host.toLowerCase()));
}

/** The annotation the service's fixture adds, for a test that did not pass, with the URL of each of its pages. */
const PAGE_URL_ANNOTATION = 'testrun:page-url';

function hostOf(url: string): string | null {
  try {
    return new URL(url).hostname.replace(/^\[(.*)\]$/, '$1').toLowerCase();
  } catch {
    return null;
  }
}

const HOST_CHAR = /[a-z0-9-]/i;

/** Whether `text` names `host` as a whole host (not as part of a longer name: `a.test` is not in `data.test`). */
function namesHost(text: string, host: string): boolean {
  if (host.length === 0) return false;
  const haystack = text.toLowerCase();
  const needle = host.toLowerCase();
  for (let at = haystack.indexOf(needle); at !== -1; at = haystack.indexOf(needle, at + 1)) {
    const before = haystack[at - 1] ?? '';
    const after = haystack[at + needle.length] ?? '';
    const afterNext = haystack[at + needle.length + 1] ?? '';
    const continues = HOST_CHAR.test(after) || (after === '.' && HOST_CHAR.test(afterNext));
    if (!HOST_CHAR.test(before) && before !== '.' && !continues) return true;
  }
  return false;
}
