import { withTimeout, type Db } from '@testrun/core';
import type { ApiRedis } from '../redis';

/** How long each backing service gets to answer before it counts as unreachable. */
const CHECK_TIMEOUT_MS = 2_000;

/** Asks Postgres and Redis to answer; each is reported as ok or the reason it is not. */
export async function checkReadiness(db: Db, redis: ApiRedis): Promise<{ postgres: string; redis: string }> {
  const [pg, rd] = await Promise.allSettled([
    withTimeout(db.$queryRaw`SELECT 1`, CHECK_TIMEOUT_MS, 'Postgres'),
    withTimeout(redis.ping(), CHECK_TIMEOUT_MS, 'Redis'),
  ]);
  return {
    postgres: pg.status === 'fulfilled' ? 'ok' : 'unreachable',
    redis: rd.status === 'fulfilled' ? 'ok' : 'unreachable',
  };
}
