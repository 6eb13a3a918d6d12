import { Router, type NextFunction, type Request, type Response } from 'express';
import {
  verifyViewToken,
  type ArtifactStore,
  type Db,
  type DerivedKeys,
  type Logger,
  type ViewSubject,
} from '@testrun/core';
import { ASSETS } from './assets';
import { findRunArtifact, loadRun, loadRunLiveStatus, loadSuiteLiveStatus, loadSuiteRun } from './queries';
import { renderNotFound, renderRunDetails, renderRunPage, renderSuitePage, type Paths } from './render';
import { createTraceViewerRouter, traceViewerDir } from './trace-viewer';

/** What the detailed view needs from the API process. */
export type ViewDeps = {
  db: Db;
  store: ArtifactStore;
  keys: DerivedKeys;
  publicBaseUrl: string;
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

/** Artifacts are data, never documents: a file that claims to be HTML still cannot run anything. */
const ARTIFACT_POLICY = "default-src 'none'; img-src 'self'; media-src 'self'; style-src 'unsafe-inline'; sandbox";

/** Types an artifact is served as; anything else is a download of bytes. */
const SERVABLE_TYPES = new Set(['image/png', 'image/jpeg', 'image/webp', 'video/webm', 'video/mp4', 'application/zip']);

const ID_SHAPE = /^[a-z]{2,5}_[0-9a-z]{26}$/;
const TOKEN_SHAPE = /^[A-Za-z0-9_-]{32}$/;

function paths(req: Request): Paths {
  return { base: req.baseUrl };
}

function sendNotFound(req: Request, res: Response): void {
  // One body for an unknown id, a wrong token and a missing token: a 404 tells nothing.
  res.status(404).setHeader('Cache-Control', 'no-store').setHeader('Content-Security-Policy', PAGE_POLICY);
  res.type('html').send(renderNotFound(paths(req)));
}

function sendPage(res: Response, body: string): void {
  res.setHeader('Cache-Control', 'no-store');
  res.setHeader('Content-Security-Policy', PAGE_POLICY);
  res.type('html').send(body);
}

/** True when the token in the URL is the one signed for this subject and id. */
function authorized(deps: ViewDeps, subject: ViewSubject, id: string, token: string): boolean {
  return ID_SHAPE.test(id) && TOKEN_SHAPE.test(token) && verifyViewToken(deps.keys.view, subject, id, token);
}

/** Parses a single `bytes=` range (the trace viewer reads zips by range); null means "send it all". */
function parseRange(header: string | undefined, size: number): { start: number; end: number } | 'unsatisfiable' | null {
  if (!header) return null;
  const m = /^bytes=(\d*)-(\d*)$/.exec(header.trim());
  if (!m || (m[1] === '' && m[2] === '')) return null;
  let start: number;
  let end: number;
  if (m[1] === '') {
    start = Math.max(size - Number(m[2]), 0);
    end = size - 1;
  } else {
    start = Number(m[1]);
    end = m[2] === '' ? size - 1 : Math.min(Number(m[2]), size - 1);
  }
  if (start > end || start >= size) return 'unsatisfiable';
  return { start, end };
}

function safeFileName(name: string): string {
  return name.replace(/[^A-Za-z0-9._-]/g, '_').slice(0, 100) || 'artifact';
}

/** The detailed view behind suiteRunUrl, mounted at /view. No API key: every URL carries a signed token. */
export function createViewRouter(deps: ViewDeps): Router {
  const router = Router();
  const logger = deps.logger.child({ component: 'view' });

  router.use((_req, res, next) => {
    res.setHeader('X-Content-Type-Options', 'nosniff');
    // The capability token is in the URL: never send it on as a referrer, never index it.
    res.setHeader('Referrer-Policy', 'no-referrer');
    res.setHeader('X-Robots-Tag', 'noindex, nofollow');
    res.setHeader('Cross-Origin-Resource-Policy', 'same-origin');
    next();
  });

  router.get('/assets/:name', (req, res) => {
    const asset = [ASSETS.css, ASSETS.js].find((a) => a.name === req.params.name);
    if (!asset) return sendNotFound(req, res);
    res.setHeader('Cache-Control', 'public, max-age=31536000, immutable');
    res.setHeader('ETag', asset.etag);
    if (req.headers['if-none-match'] === asset.etag) return void res.status(304).end();
    res.type(asset.type).send(asset.body);
  });

  const viewerDir = traceViewerDir();
  if (viewerDir) router.use('/trace-viewer', createTraceViewerRouter(viewerDir));
  else logger.warn('playwright-core trace viewer not found; traces are offered as downloads only');

  router.get('/suite-runs/:id/:token', async (req, res) => {
    const { id, token } = req.params;
    if (!authorized(deps, 'suite-run', id, token)) return sendNotFound(req, res);
    const suite = await loadSuiteRun(deps.db, deps.keys, id);
    if (!suite) return sendNotFound(req, res);
    sendPage(res, renderSuitePage(paths(req), suite));
  });

  router.get('/suite-runs/:id/:token/status.json', async (req, res) => {
    const { id, token } = req.params;
    if (!authorized(deps, 'suite-run', id, token)) return sendNotFound(req, res);
    const status = await loadSuiteLiveStatus(deps.db, id);
    if (!status) return sendNotFound(req, res);
    res.setHeader('Cache-Control', 'no-store');
    res.json(status);
  });

  router.get('/runs/:id/:token', async (req, res) => {
    const { id, token } = req.params;
    if (!authorized(deps, 'run', id, token)) return sendNotFound(req, res);
    const run = await loadRun(deps.db, deps.keys, id);
    if (!run) return sendNotFound(req, res);
    sendPage(res, renderRunPage(paths(req), run));
  });

  router.get('/runs/:id/:token/status.json', async (req, res) => {
    const { id, token } = req.params;
    if (!authorized(deps, 'run', id, token)) return sendNotFound(req, res);
    const status = await loadRunLiveStatus(deps.db, id);
    if (!status) return sendNotFound(req, res);
    res.setHeader('Cache-Control', 'no-store');
    res.json(status);
  });

  // The steps of a passed test, fetched when someone opens it on a suite page.
  router.get('/runs/:id/:token/fragment', async (req, res) => {
    const { id, token } = req.params;
    if (!authorized(deps, 'run', id, token)) return sendNotFound(req, res);
    const run = await loadRun(deps.db, deps.keys, id);
    if (!run) return sendNotFound(req, res);
    sendPage(res, renderRunDetails(paths(req), run, 3).value);
  });

  router.get('/runs/:id/:token/artifacts/:artifactId', async (req, res) => {
    const { id, token, artifactId } = req.params;
    if (!authorized(deps, 'run', id, token) || !ID_SHAPE.test(artifactId)) return sendNotFound(req, res);
    const artifact = await findRunArtifact(deps.db, id, artifactId);
    if (!artifact) return sendNotFound(req, res);
    const etag = `"${artifact.id}"`;
    const servable = SERVABLE_TYPES.has(artifact.contentType);
    // Artifacts never change once written: cache them for good, but only in the browser (the URL is a capability).
    res.setHeader('Cache-Control', 'private, max-age=31536000, immutable');
    res.setHeader('ETag', etag);
    res.setHeader('Content-Security-Policy', ARTIFACT_POLICY);
    res.setHeader('Accept-Ranges', 'bytes');
    res.setHeader('Content-Type', servable ? artifact.contentType : 'application/octet-stream');
    res.setHeader(
      'Content-Disposition',
      `${servable ? 'inline' : 'attachment'}; filename="${safeFileName(artifact.name)}"`,
    );
    if (req.headers['if-none-match'] === etag) return void res.status(304).end();

    const opened = await deps.store.open(artifact.storageKey);
    if (!opened) {
      logger.warn('artifact row without stored file', { runId: id, artifactId });
      return sendNotFound(req, res);
    }
    const range = parseRange(req.headers.range, opened.size);
    if (range === 'unsatisfiable') {
      opened.stream.destroy();
      res.setHeader('Content-Range', `bytes */${opened.size}`);
      return void res.status(416).end();
    }
    if (range) {
      opened.stream.destroy();
      const body = await deps.store.get(artifact.storageKey);
      if (!body) return sendNotFound(req, res);
      res.status(206).setHeader('Content-Range', `bytes ${range.start}-${range.end}/${body.length}`);
      res.setHeader('Content-Length', String(range.end - range.start + 1));
      return void res.end(req.method === 'HEAD' ? undefined : body.subarray(range.start, range.end + 1));
    }
    res.setHeader('Content-Length', String(opened.size));
    if (req.method === 'HEAD') {
      opened.stream.destroy();
      return void res.end();
    }
    opened.stream.on('error', (err) => {
      logger.error('artifact stream failed', { runId: id, artifactId, err: err.message });
      res.destroy(err);
    });
    opened.stream.pipe(res);
  });

  router.use((req, res) => sendNotFound(req, res));

  router.use((err: unknown, req: Request, res: Response, _next: NextFunction) => {
    // Never the URL: it carries the capability token.
    logger.error('view request failed', {
      route: req.route?.path,
      err: err instanceof Error ? err.message : String(err),
    });
    if (res.headersSent) return void res.destroy();
    res.status(503).setHeader('Cache-Control', 'no-store').setHeader('Retry-After', '5');
    res.setHeader('Content-Security-Policy', PAGE_POLICY);
    res
      .type('html')
      .send(
        '<!doctype html><html lang="en"><meta charset="utf-8"><title>Temporarily unavailable</title><h1>Temporarily unavailable</h1><p>The page cannot be shown right now. Try again in a few seconds.</p></html>',
      );
  });

  return router;
}
