import { Router } from 'express';
import type { Db } from '@testrun/core/db';
import { ApiError } from '../errors';
import type { ApiRedis } from '../redis';
import { checkReadiness } from '../services/health';

/** /healthz: the process answers. /readyz: Postgres and Redis answer too (load balancers route by it). */
export function createHealthRouter(db: Db, redis: ApiRedis): Router {
  const router = Router();
  router.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  router.get('/readyz', async (_req, res) => {
    const checks = await checkReadiness(db, redis);
    const down = Object.entries(checks)
      .filter(([, v]) => v !== 'ok')
      .map(([k]) => (k === 'postgres' ? 'Postgres' : 'Redis'));
    if (down.length > 0) {
      throw new ApiError('service_unavailable', `Not ready: ${down.join(' and ')} cannot be reached.`, {
        headers: { 'Retry-After': '5' },
      });
    }
    res.json({ status: 'ready', checks });
  });
  return router;
}
