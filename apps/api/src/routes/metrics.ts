import { API_ROUTES } from '@testrun/contracts';
import type { AppDeps } from '../deps';
import { apiRoute, type ApiRoute } from './builder';

/** GET /metrics: the registry in Prometheus's text format, never cached. */
export function metricsRoutes(deps: AppDeps): ApiRoute[] {
  const { registry } = deps.metrics;
  return [
    apiRoute(deps, API_ROUTES.metrics, async () => ({
      text: await registry.metrics(),
      headers: { 'Content-Type': registry.contentType, 'Cache-Control': 'no-store' },
    })),
  ];
}
