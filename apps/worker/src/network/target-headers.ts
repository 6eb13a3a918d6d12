import type { BrowserContext, Page, Route } from 'playwright';
import { RedirectHeaders } from './redirect-headers';

/** Resolves once a page adds the run's headers to its redirects into the target: await it before the page's first request. */
export type TargetHeadersReady = (page: Page) => Promise<void>;

/**
 * Adds a run's request headers to the requests for the target's origin, and to no other.
 *
 * Why not `extraHTTPHeaders`: it sends them to every host the page loads (analytics, CDNs).
 * Why not `route.continue({ headers })`: Chromium keeps overridden headers on the redirects it
 * follows, so a target that redirects to another origin would hand them over. Instead the request
 * is fetched by Playwright without following redirects and the response given to the page; the
 * browser then follows any redirect itself, and {@link RedirectHeaders} adds the headers to each
 * redirect that leads into the target's origin (a route never sees those), and to no other.
 */
export async function routeTargetHeaders(
  context: BrowserContext,
  baseUrl: string,
  headers: Record<string, string>,
): Promise<TargetHeadersReady> {
  if (Object.keys(headers).length === 0) return () => Promise.resolve();
  const origin = new URL(baseUrl).origin;
  const extra = lowerCaseKeys(headers);
  const redirects = new RedirectHeaders(context, origin, extra);
  const handle = async (route: Route) => {
    const request = route.request();
    const merged = { ...request.headers(), ...extra };
    try {
      const response = await route.fetch({ headers: merged, maxRedirects: 0 });
      await route.fulfill({ response });
    } catch (error) {
      // The target is unreachable (or the page went away): fail the request with the matching
      // network error, so the step reports it the way it would without headers.
      await route.abort(abortCode(error)).catch(() => undefined);
    }
  };
  await context.route((url) => url.origin === origin, handle);
  return (page) => redirects.attach(page);
}

function lowerCaseKeys(headers: Record<string, string>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers)) out[k.toLowerCase()] = v;
  return out;
}

/** The browser error code that matches a failed fetch (`net::ERR_CONNECTION_REFUSED` and so on). */
function abortCode(error: unknown): string {
  const text = error instanceof Error ? error.message : String(error);
  if (/ECONNREFUSED/.test(text)) return 'connectionrefused';
  if (/ENOTFOUND|EAI_AGAIN/.test(text)) return 'namenotresolved';
  if (/ECONNRESET/.test(text)) return 'connectionreset';
  if (/ETIMEDOUT|Timeout/i.test(text)) return 'timedout';
  if (/EHOSTUNREACH|ENETUNREACH/.test(text)) return 'addressunreachable';
  return 'failed';
}
