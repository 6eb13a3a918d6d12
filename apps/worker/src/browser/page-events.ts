import type { BrowserContext, ConsoleMessage, Request, Response, WebError } from 'playwright';
import { displayUrl, truncate } from '../support/text-format';

import type { PageEvent } from '@testrun/contracts';

export type { PageEvent };

/** At most this many events are kept per attempt; the count of the rest is kept. */
const MAX_PAGE_EVENTS = 100;
/** A message or URL is cut to this length. */
const MAX_TEXT = 2_000;

/**
 * Collects the page events of a run's context, every page of it (popups too), from the moment it is
 * made until stop(). Listening costs nothing on pages that log nothing: Playwright reports these
 * events over the connection it already holds.
 */
export class PageEventLog {
  readonly events: PageEvent[] = [];
  /** Events past {@link MAX_PAGE_EVENTS}, counted but not kept. */
  dropped = 0;

  private readonly onConsole = (message: ConsoleMessage) => {
    // Chromium's own "Failed to load resource" lines repeat the failed requests listed beside them.
    if (message.type() !== 'error' || message.text().startsWith('Failed to load resource')) return;
    this.add({ kind: 'console', message: message.text(), url: message.location().url || null });
  };
  private readonly onError = (error: WebError) => {
    const e = error.error();
    this.add({ kind: 'exception', message: e.stack ?? `${e.name}: ${e.message}`, url: error.page()?.url() ?? null });
  };
  private readonly onFailed = (request: Request) => {
    if (isFavicon(request)) return;
    this.add({
      kind: 'request',
      message: request.failure()?.errorText ?? 'failed',
      url: request.url(),
      method: request.method(),
    });
  };
  private readonly onResponse = (response: Response) => {
    if (response.status() < 400 || isFavicon(response.request())) return;
    this.add({
      kind: 'request',
      message: response.statusText() || `HTTP ${response.status()}`,
      url: response.url(),
      method: response.request().method(),
      status: response.status(),
    });
  };

  constructor(private readonly context: BrowserContext) {
    context.on('console', this.onConsole);
    context.on('weberror', this.onError);
    context.on('requestfailed', this.onFailed);
    context.on('response', this.onResponse);
  }

  stop(): void {
    this.context.off('console', this.onConsole);
    this.context.off('weberror', this.onError);
    this.context.off('requestfailed', this.onFailed);
    this.context.off('response', this.onResponse);
  }

  private add(
    event: Omit<PageEvent, 'at' | 'method' | 'status'> & Partial<Pick<PageEvent, 'method' | 'status'>>,
  ): void {
    if (this.events.length >= MAX_PAGE_EVENTS) {
      this.dropped += 1;
      return;
    }
    this.events.push({
      kind: event.kind,
      at: new Date(),
      message: truncate(event.message, MAX_TEXT),
      // user:password written into a URL never leaves the worker.
      url: event.url === null ? null : truncate(displayUrl(event.url), MAX_TEXT),
      method: event.method ?? null,
      status: event.status ?? null,
    });
  }
}

/** The icon the browser asks for on its own: not a request of the page's. */
function isFavicon(request: Request): boolean {
  return request.resourceType() === 'other' && new URL(request.url()).pathname === '/favicon.ico';
}
