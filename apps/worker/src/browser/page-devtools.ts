import type { CDPSession, Page } from 'playwright';
import { withTimeout } from '@testrun/core/with-timeout';

/**
 * The worker's own DevTools session on each page, for what it reads of the page besides the test's
 * steps: heap samples, timeline pictures, the title at a failure, whether a filled field is a password. DevTools
 * calls are not Playwright actions, so none of them shows in the run's trace; only opening the
 * session is one, which is why the run's page has its session opened before tracing starts.
 */
const sessions = new WeakMap<Page, Promise<CDPSession>>();

/** The page's session, opened on first use. */
export function pageSession(page: Page): Promise<CDPSession> {
  let session = sessions.get(page);
  if (!session) {
    session = page.context().newCDPSession(page);
    // A page that closed before it opened asks again next time (and finds itself closed).
    void session.catch(() => sessions.delete(page));
    sessions.set(page, session);
  }
  return session;
}

/**
 * Evaluates `expression` in the page's main frame and returns its value, or null when the page is
 * gone, throws, or does not answer within `timeoutMs`.
 */
async function evaluateQuietly<T>(page: Page, expression: string, timeoutMs: number): Promise<T | null> {
  if (page.isClosed()) return null;
  const read = (async () => {
    const session = await pageSession(page);
    const { result, exceptionDetails } = await session.send('Runtime.evaluate', { expression, returnByValue: true });
    return exceptionDetails ? null : (result.value as T);
  })();
  return withTimeout(read, timeoutMs, 'reading the page').catch(() => null);
}

/** The page's title (as `page.title()` gives it), or null when the page cannot tell within `timeoutMs`. */
export async function pageTitle(page: Page, timeoutMs: number): Promise<string | null> {
  const title = await evaluateQuietly<unknown>(page, 'document.title', timeoutMs);
  return typeof title === 'string' ? title : null;
}

/**
 * Whether the field a step just filled is a password input: Playwright's fill leaves it focused, so
 * it is the focused element, followed into same-origin frames and open shadow roots.
 */
const FOCUSED_IS_PASSWORD = `(() => {
  let e = document.activeElement;
  for (let i = 0; e && i < 20; i++) {
    const inner = e.shadowRoot?.activeElement ?? (e.contentDocument ? e.contentDocument.activeElement : null);
    if (!inner) break;
    e = inner;
  }
  return !!e && e.localName === 'input' && String(e.type).toLowerCase() === 'password';
})()`;

/** True when the focused field of the page is a password input; false when it is not or the page cannot tell. */
export async function focusedIsPassword(page: Page, timeoutMs: number): Promise<boolean> {
  return (await evaluateQuietly<boolean>(page, FOCUSED_IS_PASSWORD, timeoutMs)) === true;
}
