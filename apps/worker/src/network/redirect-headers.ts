import type { BrowserContext, CDPSession, Page } from 'playwright';

/** What DevTools tells of a paused request (`Fetch.requestPaused`), as far as this file reads it. */
interface RequestPaused {
  requestId: string;
  request: { url: string; headers: Record<string, string> };
  redirectedRequestId?: string;
}

/**
 * Adds a run's headers to the redirects that lead into the target's origin.
 *
 * Why: a route only ever sees the first request of a redirect chain; Playwright continues every
 * redirect itself, so a redirect that comes (back) to the target's origin, from another origin or
 * from the target itself, would reach it without the run's headers. Each page of the context gets a
 * DevTools session of its own that pauses the requests for the target's origin and adds the headers
 * to those a redirect made (`redirectedRequestId`); the first request of a chain is the route's.
 * Requests for any other origin are never paused here, so they never get the headers.
 */
export class RedirectHeaders {
  private readonly sessions = new WeakMap<Page, Promise<void>>();

  constructor(
    private readonly context: BrowserContext,
    private readonly origin: string,
    private readonly headers: Readonly<Record<string, string>>,
  ) {
    for (const page of context.pages()) void this.attach(page);
    context.on('page', (page) => void this.attach(page));
  }

  /**
   * Resolves once `page` adds the headers to its redirects into the target. Only requests that
   * start after that are covered, so the page's first request must wait for it; a popup's first
   * request may start before its session does, and then its redirects go without the headers.
   */
  attach(page: Page): Promise<void> {
    let ready = this.sessions.get(page);
    if (!ready) {
      // A page that closes meanwhile has nothing left to send: its redirects are moot.
      ready = this.open(page).catch(() => undefined);
      this.sessions.set(page, ready);
    }
    return ready;
  }

  private async open(page: Page): Promise<void> {
    const session = await this.context.newCDPSession(page);
    session.on('Fetch.requestPaused', (event) => void this.onPaused(session, event));
    await session.send('Fetch.enable', { patterns: [{ urlPattern: `${this.origin}/*`, requestStage: 'Request' }] });
  }

  private async onPaused(session: CDPSession, event: RequestPaused): Promise<void> {
    const intoTarget = event.redirectedRequestId !== undefined && originOf(event.request.url) === this.origin;
    const headers = intoTarget ? withHeaders(event.request.headers, this.headers) : undefined;
    await session
      .send('Fetch.continueRequest', { requestId: event.requestId, ...(headers ? { headers } : {}) })
      .catch(() => undefined); // the page or its request went away
  }
}

function originOf(url: string): string | undefined {
  try {
    return new URL(url).origin;
  } catch {
    return undefined;
  }
}

/**
 * The request's headers with the run's on top, as the list DevTools takes. Cookie is left out so
 * that the network stack adds the jar's own, as it does for every request.
 */
function withHeaders(
  sent: Record<string, string>,
  run: Readonly<Record<string, string>>,
): Array<{ name: string; value: string }> {
  const names = new Set(Object.keys(run));
  const kept = Object.entries(sent).filter(
    ([name]) => !names.has(name.toLowerCase()) && name.toLowerCase() !== 'cookie',
  );
  return [...kept, ...Object.entries(run)].map(([name, value]) => ({ name, value }));
}
