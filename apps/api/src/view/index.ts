import compression from 'compression';
import { Router, type NextFunction, type Request, type Response } from 'express';
import { ArtifactStoreUnavailableError, type ArtifactStore } from '@testrun/core/artifact-store';
import type { Db } from '@testrun/core/db';
import type { Logger } from '@testrun/core/logger';
import type { DerivedKeys, ViewSubject } from '@testrun/core/secrets';
import { checkViewLink, loadViewLinkState, signViewLink } from '@testrun/core/view-links';
import { describeError, isUnavailableError } from '../errors';
import { matchesETag, sendArtifact } from './artifacts';
import { findAsset } from './assets';
import { historySection } from './history';
import { html } from './html';
import { readSuiteFilter } from './filters';
import type { LinkSigner, LiveStatus } from './model';
import {
  findRunArtifact,
  loadRun,
  loadRunLiveStatus,
  loadSuiteLiveStatus,
  loadSuiteRun,
  loadSuiteSearchTexts,
} from './queries';
import type { Paths } from './layout';
import { renderArtifactExpired, renderFailure, renderNotFound, renderRunPage, renderSuitePage } from './render';
import { renderRunDetails } from './run-details';
import { createTraceViewerRouter, traceViewerDir } from './trace-viewer';

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

/** Pages: nothing from anywhere else, no inline code, no framing, no forms. */
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

const ID_SHAPE = /^[a-z]{2,5}_[0-9a-z]{26}$/;
// A link (`<start base 36>~<hmac>`), or one of the older forms: `<expiry base 36>.<hmac>`, the HMAC alone.
const TOKEN_SHAPE = /^(?:[0-9a-z]{1,11}[.~])?[A-Za-z0-9_-]{32}$/;

function paths(req: Request): Paths {
  return { base: req.baseUrl };
}

function sendPage(res: Response, status: number, body: string): void {
  res.status(status).setHeader('Cache-Control', 'no-store').setHeader('Content-Security-Policy', PAGE_POLICY);
  // Not res.send: it would hash the whole page for an ETag, which a page never cached has no use for.
  res.type('html').setHeader('Content-Length', Buffer.byteLength(body));
  res.end(body);
}

function sendNotFound(req: Request, res: Response): void {
  // One body for an unknown id, a wrong token and a missing token: a 404 tells nothing.
  sendPage(res, 404, renderNotFound(paths(req)));
}

/**
 * A signer of the page's own links, with the terms of the link it was opened with, when the token
 * in the URL is one signed for this subject and id, not expired and not revoked; else null.
 */
async function authorized(deps: ViewDeps, subject: ViewSubject, id: string, token: string): Promise<LinkSigner | null> {
  if (!ID_SHAPE.test(id) || !TOKEN_SHAPE.test(token)) return null;
  const state = await loadViewLinkState(deps.db, subject, id);
  if (!state) return null;
  const terms = checkViewLink(deps.keys.view, subject, id, token, state, deps.viewLinkTtlDays);
  return terms && ((s, linked) => signViewLink(deps.keys.view, s, linked, terms));
}

/** An outage (Postgres, Redis or the artifact store cannot be reached) rather than a fault of the view's own. */
function isOutage(error: unknown): boolean {
  return error instanceof ArtifactStoreUnavailableError || isUnavailableError(error);
}

/** The detailed view behind suiteRunUrl, mounted at /view. No API key: every URL carries a signed token. */
export function createViewRouter(deps: ViewDeps): Router {
  const router = Router();
  const logger = deps.logger.child({ component: 'view' });

  /**
   * A GET route under `<id>/<token>`: 404 unless the token was signed for this subject and id and
   * `load` finds something, else `send` answers with it.
   */
  function capability<T>(
    subject: ViewSubject,
    load: (id: string, req: Request, sign: LinkSigner) => Promise<T | null>,
    send: (req: Request, res: Response, found: T) => unknown,
  ) {
    return async (req: Request, res: Response) => {
      const { id, token } = req.params;
      const sign =
        typeof id === 'string' && typeof token === 'string' ? await authorized(deps, subject, id, token) : null;
      if (typeof id !== 'string' || !sign) return sendNotFound(req, res);
      const found = await load(id, req, sign);
      if (found === null) return sendNotFound(req, res);
      await send(req, res, found);
    };
  }

  // Pages, their JSON and the stylesheet and script go out compressed (brotli where the browser
  // takes it, else gzip): a 1,000-test page is mostly repeated markup. Artifacts are left as they
  // are: images, video and trace zips are compressed already, and ranges must count stored bytes.
  router.use(compression({ filter: (req, res) => !/\/artifacts\//.test(req.path) && compression.filter(req, res) }));

  router.use((_req, res, next) => {
    res.setHeader('X-Content-Type-Options', 'nosniff');
    // The capability token is in the URL: never send it on as a referrer, never index it.
    res.setHeader('Referrer-Policy', 'no-referrer');
    res.setHeader('X-Robots-Tag', 'noindex, nofollow');
    res.setHeader('Cross-Origin-Resource-Policy', 'same-origin');
    next();
  });

  router.get('/assets/:name', (req, res) => {
    const asset = findAsset(req.params.name);
    if (!asset) return sendNotFound(req, res);
    // The name holds the content's hash: a changed file is a new URL, so this one may be kept forever.
    res.setHeader('Cache-Control', 'public, max-age=31536000, immutable');
    res.setHeader('ETag', asset.etag);
    if (matchesETag(req, asset.etag)) return void res.status(304).end();
    res.type(asset.type).send(asset.body);
  });

  const viewerDir = traceViewerDir();
  if (viewerDir) router.use('/trace-viewer', createTraceViewerRouter(viewerDir));
  else logger.warn('playwright-core trace viewer not found; traces are offered as downloads only');

  /** A subject's page and the status.json it polls while it is live. */
  function pageRoutes<T>(
    prefix: '/suite-runs' | '/runs',
    subject: ViewSubject,
    load: (db: Db, sign: LinkSigner, id: string, req: Request) => Promise<T | null>,
    render: (p: Paths, found: T) => string,
    loadStatus: (db: Db, id: string) => Promise<LiveStatus | null>,
  ): void {
    router.get(
      `${prefix}/:id/:token`,
      capability(
        subject,
        (id, req, sign) => load(deps.db, sign, id, req),
        (req, res, found) => sendPage(res, 200, render(paths(req), found)),
      ),
    );
    router.get(
      `${prefix}/:id/:token/status.json`,
      capability(
        subject,
        (id) => loadStatus(deps.db, id),
        (_req, res, status) => res.setHeader('Cache-Control', 'no-store').json(status),
      ),
    );
  }

  pageRoutes(
    '/suite-runs',
    'suite-run',
    async (db, sign, id, req) => {
      const filter = readSuiteFilter(req.query);
      const [suite, texts] = await Promise.all([
        loadSuiteRun(db, sign, id),
        // A search reaches into the steps; without one, the page reads no step of a passed test.
        filter.q ? loadSuiteSearchTexts(db, id) : undefined,
      ]);
      return suite && { suite, filter, texts };
    },
    (p, { suite, filter, texts }) => renderSuitePage(p, suite, filter, texts),
    loadSuiteLiveStatus,
  );
  // What the suite page's search looks through, fetched once when someone first types in it.
  router.get(
    '/suite-runs/:id/:token/search.json',
    capability(
      'suite-run',
      async (id) => {
        const texts = await loadSuiteSearchTexts(deps.db, id);
        return texts.size === 0 && !(await loadViewLinkState(deps.db, 'suite-run', id)) ? null : texts;
      },
      (_req, res, texts) => res.setHeader('Cache-Control', 'no-store').json({ runs: Object.fromEntries(texts) }),
    ),
  );
  pageRoutes('/runs', 'run', loadRun, renderRunPage, loadRunLiveStatus);
  // The steps of a passed test, fetched when someone opens it on a suite page.
  router.get(
    '/runs/:id/:token/fragment',
    capability(
      'run',
      (id, _req, sign) => loadRun(deps.db, sign, id),
      (req, res, run) =>
        sendPage(res, 200, html`${renderRunDetails(paths(req), run, 3)} ${historySection(paths(req), run, 3)}`.value),
    ),
  );
  router.get(
    '/runs/:id/:token/artifacts/:artifactId',
    capability(
      'run',
      (id, req) => {
        const { artifactId } = req.params;
        if (typeof artifactId !== 'string' || !ID_SHAPE.test(artifactId)) return Promise.resolve(null);
        return findRunArtifact(deps.db, id, artifactId);
      },
      async (req, res, artifact) => {
        if (artifact === 'expired') return sendPage(res, 410, renderArtifactExpired(paths(req)));
        if (await sendArtifact(req, res, { store: deps.store, logger }, artifact)) return;
        logger.warn('artifact row without stored file', { artifactId: artifact.id });
        sendNotFound(req, res);
      },
    ),
  );

  router.use((req, res) => sendNotFound(req, res));

  router.use((error: unknown, req: Request, res: Response, _next: NextFunction) => {
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
  });

  return router;
}

/** The route pattern that matched (`/runs/:id/:token`), never the path with its token. */
function routeOf(req: Request): string | undefined {
  const route: unknown = req.route;
  if (typeof route === 'object' && route !== null && 'path' in route && typeof route.path === 'string')
    return route.path;
  return undefined;
}
