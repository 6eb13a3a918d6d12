import compression from 'compression';
import type { ErrorRequestHandler, Request, RequestHandler, Response } from 'express';
import { ArtifactStoreUnavailableError, type ArtifactStore } from '@testrun/core/artifact-store';
import type { Db } from '@testrun/core/db';
import type { Logger } from '@testrun/core/logger';
import type { DerivedKeys, ViewSubject } from '@testrun/core/secrets';
import { checkViewLink, loadViewLinkState, signViewLink } from '@testrun/core/view-links';
import { describeError, isUnavailableError } from '../errors';
import type { LinkSigner } from './model';
import type { Paths } from './render/layout';
import { renderFailure, renderNotFound } from './render/pages';

// How the view answers over HTTP: its pages' headers, the capability check of a URL's token, and
// its error pages. The routes themselves are in routes/view.ts.

/** Pages: nothing from anywhere else, no inline code, no framing, no forms (an approval page's post to this origin). */
const PAGE_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self'",
  "media-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** An approval link's page (routes/view-approve.ts): the same, but its forms post to this origin. */
export const APPROVAL_PAGE_POLICY = PAGE_POLICY.replace("form-action 'none'", "form-action 'self'");

export const ID_SHAPE = /^[a-z]{2,5}_[0-9a-z]{26}$/;
// A link (`<start base 36>~<hmac>`), or one of the older forms: `<expiry base 36>.<hmac>`, the HMAC alone.
const TOKEN_SHAPE = /^(?:[0-9a-z]{1,11}[.~])?[A-Za-z0-9_-]{32}$/;

export function paths(req: Request): Paths {
  return { base: req.baseUrl };
}

export function sendPage(res: Response, status: number, body: string, policy = PAGE_POLICY): void {
  res.status(status).setHeader('Cache-Control', 'no-store').setHeader('Content-Security-Policy', policy);
  // Not res.send: it would hash the whole page for an ETag, which a page never cached has no use for.
  res.type('html').setHeader('Content-Length', Buffer.byteLength(body));
  res.end(body);
}

export function sendNotFound(req: Request, res: Response): void {
  // One body for an unknown id, a wrong token and a missing token: a 404 tells nothing.
  sendPage(res, 404, renderNotFound(paths(req)));
}

/** What the detailed view needs from the API process. */
export type ViewDeps = {
  db: Db;
  store: ArtifactStore;
  keys: DerivedKeys;
  publicBaseUrl: string;
  /** VIEW_LINK_TTL_DAYS: how long a link works; also bounds links of the older form without an expiry. */
  viewLinkTtlDays: number;
  logger: Logger;
};

/** What checking a link's token needs. */
export type LinkCheck = { db: Db; keys: DerivedKeys; viewLinkTtlDays: number };

/**
 * A signer of the page's own links, with the terms of the link it was opened with, when the token
 * in the URL is one signed for this subject and id, not expired and not revoked; else null.
 */
export async function authorized(
  deps: LinkCheck,
  subject: ViewSubject,
  id: string,
  token: string,
): Promise<LinkSigner | null> {
  if (!ID_SHAPE.test(id) || !TOKEN_SHAPE.test(token)) return null;
  const state = await loadViewLinkState(deps.db, subject, id);
  if (!state) return null;
  const terms = checkViewLink(deps.keys.view, subject, id, token, state, deps.viewLinkTtlDays);
  return terms && ((s, linked) => signViewLink(deps.keys.view, s, linked, terms));
}

/**
 * Pages, their JSON and the stylesheet and script go out compressed (brotli where the browser
 * takes it, else gzip): a 1,000-test page is mostly repeated markup. Artifacts are left as they
 * are: images, video and trace zips are compressed already, and ranges must count stored bytes.
 */
export const compressPages: RequestHandler = compression({
  filter: (req, res) => !/\/artifacts\//.test(req.path) && compression.filter(req, res),
});

export const viewHeaders: RequestHandler = (_req, res, next) => {
  res.setHeader('X-Content-Type-Options', 'nosniff');
  // The capability token is in the URL: never send it on as a referrer, never index it.
  res.setHeader('Referrer-Policy', 'no-referrer');
  res.setHeader('X-Robots-Tag', 'noindex, nofollow');
  res.setHeader('Cross-Origin-Resource-Policy', 'same-origin');
  next();
};

/** An outage (Postgres, Redis or the artifact store cannot be reached) rather than a fault of the view's own. */
function isOutage(error: unknown): boolean {
  return error instanceof ArtifactStoreUnavailableError || isUnavailableError(error);
}

/** The view's error page: 503 for an outage (retry soon), else 500; logged without the URL. */
export function viewErrorHandler(logger: Logger): ErrorRequestHandler {
  return (error: unknown, req, res, _next) => {
    const requestId: unknown = res.locals.requestId;
    const outage = isOutage(error);
    // Never the URL: it carries the capability token.
    const fields = { requestId, route: routeOf(req), err: describeError(error) };
    if (outage) logger.warn('view request failed: a backing service is unavailable', fields);
    else logger.error('view request failed', { ...fields, stack: error instanceof Error ? error.stack : undefined });
    if (res.headersSent) return void res.destroy();
    // Only an outage is worth retrying soon; a fault of the view's own answers the same until it is fixed.
    if (outage) res.setHeader('Retry-After', '5');
    sendPage(res, outage ? 503 : 500, renderFailure(paths(req), outage ? 'unavailable' : 'internal'));
  };
}

/** The route pattern that matched (`/runs/:id/:token`), never the path with its token. */
function routeOf(req: Request): string | undefined {
  const route: unknown = req.route;
  if (typeof route === 'object' && route !== null && 'path' in route && typeof route.path === 'string')
    return route.path;
  return undefined;
}
