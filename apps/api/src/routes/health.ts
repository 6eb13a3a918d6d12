import { API_ROUTES } from '@testrun/contracts';
import type { AppDeps } from '../deps';
import { ApiError } from '../errors';
import { checkReadiness } from '../services/health';
import { apiRoute, type ApiRoute } from './builder';

/** /healthz: the process answers. /readyz: Postgres and Redis answer too (load balancers route by it). */
export function healthRoutes(deps: AppDeps): ApiRoute[] {
  return [
    apiRoute(deps, API_ROUTES.healthz, () => ({ body: { status: 'ok' } })),
    apiRoute(deps, API_ROUTES.readyz, async () => {
      const checks = await checkReadiness(deps.db, deps.redis);
      const down = Object.entries(checks)
        .filter(([, v]) => v !== 'ok')
        .map(([k]) => (k === 'postgres' ? 'Postgres' : 'Redis'));
      if (down.length > 0) {
        throw new ApiError('service_unavailable', `Not ready: ${down.join(' and ')} cannot be reached.`, {
          headers: { 'Retry-After': '5' },
        });
      }
      return { body: { status: 'ready', checks } };
    }),
  ];
}
