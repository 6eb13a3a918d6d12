import { Router, type Request, type Response } from 'express';
import type { Db } from '@testrun/core/db';
import type { Logger } from '@testrun/core/logger';
import type { ViewSubject } from '@testrun/core/secrets';
import { findSetupArtifact } from '@testrun/core/runs';
import { loadViewLinkState } from '@testrun/core/view-links';
import { matchesETag, sendArtifact } from '../view/artifacts';
import { findAsset } from '../view/assets';
import {
  findRunArtifact,
  loadRun,
  loadRunLiveStatus,
  loadSuiteLiveStatus,
  loadSuiteRun,
  loadSuiteSearchTexts,
} from '../view/data/queries';
import { withPreviews, withSetupPreviews } from '../view/data/previews';
import { readSuiteFilter } from '../view/filters';
import {
  authorized,
  compressPages,
  ID_SHAPE,
  paths,
  sendNotFound,
  sendPage,
  viewErrorHandler,
  viewHeaders,
  type ViewDeps,
} from '../view/http';
import type { LinkSigner, LiveStatus } from '../view/model';
import { historySection } from '../view/render/history';
import { html } from '../view/render/html';
import type { Paths } from '../view/render/layout';
import { renderArtifactExpired, renderRunPage, renderSuitePage } from '../view/render/pages';
import { renderRunDetails } from '../view/render/run-details';
import { createTraceViewerRouter, traceViewerDir } from '../view/trace-viewer';
import { approvalRoutes } from './view-approve';

/**
 * A GET handler under `<id>/<token>`: 404 unless the token was signed for this subject and id and
 * `load` finds something, else `send` answers with it.
 */
function capability<T>(
  deps: ViewDeps,
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

/** The stylesheet and the script, under names that hold their content's hash. */
function assetRoutes(router: Router): void {
  router.get('/assets/:name', (req, res) => {
    const asset = findAsset(req.params.name);
    if (!asset) return sendNotFound(req, res);
    // The name holds the content's hash: a changed file is a new URL, so this one may be kept forever.
    res.setHeader('Cache-Control', 'public, max-age=31536000, immutable');
    res.setHeader('ETag', asset.etag);
    if (matchesETag(req, asset.etag)) return void res.status(304).end();
    res.type(asset.type).send(asset.body);
  });
}

/** A subject's page and the status.json it polls while it is live. */
function pageRoutes<T>(
  router: Router,
  deps: ViewDeps,
  page: {
    prefix: '/suite-runs' | '/runs';
    subject: ViewSubject;
    load: (db: Db, sign: LinkSigner, id: string, req: Request) => Promise<T | null>;
    render: (p: Paths, found: T) => string;
    loadStatus: (db: Db, id: string) => Promise<LiveStatus | null>;
  },
): void {
  const { prefix, subject, load, render, loadStatus } = page;
  router.get(
    `${prefix}/:id/:token`,
    capability(
      deps,
      subject,
      (id, req, sign) => load(deps.db, sign, id, req),
      (req, res, found) => sendPage(res, 200, render(paths(req), found)),
    ),
  );
  router.get(
    `${prefix}/:id/:token/status.json`,
    capability(
      deps,
      subject,
      (id) => loadStatus(deps.db, id),
      (_req, res, status) => res.setHeader('Cache-Control', 'no-store').json(status),
    ),
  );
}

/** A suite run's page, its status.json, and what its search looks through. */
function suiteRunRoutes(router: Router, deps: ViewDeps): void {
  pageRoutes(router, deps, {
    prefix: '/suite-runs',
    subject: 'suite-run',
    load: async (db, sign, id, req) => {
      const filter = readSuiteFilter(req.query);
      const [suite, texts] = await Promise.all([
        loadSuiteRun(db, sign, id),
        // A search reaches into the steps; without one, the page reads no step of a passed test.
        filter.q ? loadSuiteSearchTexts(db, id) : undefined,
      ]);
      if (suite) await withSetupPreviews(db, deps.store, suite.setupTests);
      return suite && { suite, filter, texts };
    },
    render: (p, { suite, filter, texts }) => renderSuitePage(p, suite, filter, texts),
    loadStatus: loadSuiteLiveStatus,
  });
  // The files of its setup tests' shown executions, served as a run's artifacts are.
  router.get(
    '/suite-runs/:id/:token/artifacts/:artifactId',
    capability(
      deps,
      'suite-run',
      (id, req) => {
        const { artifactId } = req.params;
        if (typeof artifactId !== 'string' || !ID_SHAPE.test(artifactId)) return Promise.resolve(null);
        return findSetupArtifact(deps.db, { suiteRunId: id }, artifactId);
      },
      async (req, res, artifact) => {
        if (await sendArtifact(req, res, { store: deps.store, logger: deps.logger }, artifact)) return;
        deps.logger.warn('setup artifact row without stored file', { artifactId: artifact.id });
        sendNotFound(req, res);
      },
    ),
  );
  // What the suite page's search looks through, fetched once when someone first types in it.
  router.get(
    '/suite-runs/:id/:token/search.json',
    capability(
      deps,
      'suite-run',
      async (id) => {
        const texts = await loadSuiteSearchTexts(deps.db, id);
        return texts.size === 0 && !(await loadViewLinkState(deps.db, 'suite-run', id)) ? null : texts;
      },
      (_req, res, texts) => res.setHeader('Cache-Control', 'no-store').json({ runs: Object.fromEntries(texts) }),
    ),
  );
}

/** A run's page, its status.json, the fragment of its steps, and its artifacts. */
function runRoutes(router: Router, deps: ViewDeps, logger: Logger): void {
  pageRoutes(router, deps, {
    prefix: '/runs',
    subject: 'run',
    load: async (db, sign, id) => {
      const run = await loadRun(db, sign, id);
      return run && withPreviews(db, deps.store, run);
    },
    render: renderRunPage,
    loadStatus: loadRunLiveStatus,
  });
  // The steps of a passed test, fetched when someone opens it on a suite page.
  router.get(
    '/runs/:id/:token/fragment',
    capability(
      deps,
      'run',
      async (id, _req, sign) => {
        const run = await loadRun(deps.db, sign, id);
        return run && withPreviews(deps.db, deps.store, run);
      },
      (req, res, run) =>
        sendPage(res, 200, html`${renderRunDetails(paths(req), run, 3)} ${historySection(paths(req), run, 3)}`.value),
    ),
  );
  router.get(
    '/runs/:id/:token/artifacts/:artifactId',
    capability(
      deps,
      'run',
      (id, req) => {
        const { artifactId } = req.params;
        if (typeof artifactId !== 'string' || !ID_SHAPE.test(artifactId)) return Promise.resolve(null);
        return findRunArtifact(deps.db, id, artifactId).then(
          // A run outside a suite run serves its setup tests' files too.
          async (found) => found ?? (await findSetupArtifact(deps.db, { runId: id }, artifactId)),
        );
      },
      async (req, res, artifact) => {
        if (artifact === 'expired') return sendPage(res, 410, renderArtifactExpired(paths(req)));
        if (await sendArtifact(req, res, { store: deps.store, logger }, artifact)) return;
        logger.warn('artifact row without stored file', { artifactId: artifact.id });
        sendNotFound(req, res);
      },
    ),
  );
}

/**
 * The detailed view behind suiteRunUrl, mounted at /view: HTML pages, not the JSON API, so its
 * routes are not declared in contracts. No API key: every URL carries a signed token (view/http.ts).
 */
export function createViewRouter(deps: ViewDeps): Router {
  const router = Router();
  const logger = deps.logger.child({ component: 'view' });
  router.use(compressPages);
  router.use(viewHeaders);
  assetRoutes(router);
  const viewerDir = traceViewerDir();
  if (viewerDir) router.use('/trace-viewer', createTraceViewerRouter(viewerDir));
  else logger.warn('playwright-core trace viewer not found; traces are offered as downloads only');
  suiteRunRoutes(router, deps);
  runRoutes(router, deps, logger);
  approvalRoutes(router, deps);
  router.use((req, res) => sendNotFound(req, res));
  router.use(viewErrorHandler(logger));
  return router;
}
