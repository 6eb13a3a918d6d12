import express, { type Express } from 'express';
import { BUNDLE_LIMITS, type BundleCaps } from '@testrun/contracts';
import type { AppDeps } from './deps';
import { ApiError, createErrorHandler } from './errors';
import './locals';
import { ApiMetrics } from './metrics';
import { authenticate } from './middleware/authenticate';
import { markMount, observeRequests } from './middleware/observe-requests';
import { rateLimitPerKey } from './middleware/rate-limit';
import { requestContext } from './middleware/request-context';
import { requestHygiene } from './middleware/request-hygiene';
import { routerOf } from './routes/builder';
import { healthRoutes } from './routes/health';
import { metaRoutes } from './routes/meta';
import { metricsRoutes } from './routes/metrics';
import { projectsRoutes } from './routes/projects';
import { runsRoutes } from './routes/runs';
import { secretRoutes } from './routes/secrets';
import { suiteRunsRoutes } from './routes/suite-runs';
import { ChangeWatcher } from './services/long-poll';
import { createViewRouter } from './routes/view';

/**
 * The API as an express app. Check order on the API routes: request id → authentication (401/403)
 * → per-key rate limit (429) → the key's scope (403 insufficient_scope) → body (415/413/400) →
 * existence (404) → limits (422) → 201.
 */
export function createApp(
  input: Omit<AppDeps, 'now' | 'metrics' | 'watcher' | 'bundleMaxBytes' | 'bundleCaps'> & {
    now?: () => Date;
    bundleMaxBytes?: number;
    bundleCaps?: BundleCaps;
    metrics?: ApiMetrics;
    watcher?: ChangeWatcher;
  },
): Express {
  const deps: AppDeps = {
    ...input,
    now: input.now ?? (() => new Date()),
    bundleMaxBytes: input.bundleMaxBytes ?? BUNDLE_LIMITS.maxBytes,
    bundleCaps: input.bundleCaps,
    metrics: input.metrics ?? new ApiMetrics(),
    watcher: input.watcher ?? new ChangeWatcher(input.db, input.logger, input.config),
  };
  const { config, db, redis, logger, metrics } = deps;
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', config.trustProxy);

  app.use(observeRequests(metrics));
  app.use(requestContext(logger));
  app.use(requestHygiene);
  app.use(routerOf('', healthRoutes(deps)));
  if (config.metrics.where === 'api') app.use(routerOf('', metricsRoutes(deps)));
  app.use(
    '/view',
    markMount,
    createViewRouter({
      db,
      store: deps.store,
      keys: deps.keys,
      publicBaseUrl: config.publicBaseUrl,
      viewLinkTtlDays: config.viewLinkTtlDays,
      logger,
    }),
  );
  app.use('/api/v1', markMount, routerOf('/api/v1', metaRoutes(deps)));

  const guarded = [
    markMount,
    authenticate({
      db,
      redis,
      logger,
      now: deps.now,
      redisPrefix: config.redisPrefix,
      unauthenticatedPerMinute: config.unauthenticatedRateLimitPerMinute,
      rateWindowMs: config.rateLimitWindowMs,
    }),
    rateLimitPerKey({
      redis,
      perMinute: config.rateLimitPerMinute,
      windowMs: config.rateLimitWindowMs,
      redisPrefix: config.redisPrefix,
    }),
  ];
  app.use('/api/v1/runs', ...guarded, routerOf('/api/v1/runs', runsRoutes(deps)));
  app.use('/api/v1/suite-runs', ...guarded, routerOf('/api/v1/suite-runs', suiteRunsRoutes(deps)));
  app.use('/api/v1/projects', ...guarded, routerOf('/api/v1/projects', projectsRoutes(deps)));
  app.use('/api/v1/secrets', ...guarded, routerOf('/api/v1/secrets', secretRoutes(deps, 'workspace')));

  app.use(() => {
    throw new ApiError('not_found', 'There is no such route.');
  });
  app.use(createErrorHandler(logger));
  return app;
}
