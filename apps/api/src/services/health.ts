import type { Db } from '@testrun/core/db';
import { withTimeout } from '@testrun/core/with-timeout';
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

/** How long start-up waits for the first connections before serving anyway (then /readyz says 503). */
const WARM_UP_TIMEOUT_MS = 10_000;

/**
 * Opens the first Postgres connection (which also loads Prisma's query compiler) and the Redis
 * connection before the API listens, so the first /readyz reports the services' state, not the cost
 * of a cold start. A service that is down does not stop the start: it is reported by /readyz.
 */
export async function warmUp(db: Db, redis: ApiRedis): Promise<void> {
  await Promise.allSettled([
    withTimeout(db.$queryRaw`SELECT 1`, WARM_UP_TIMEOUT_MS, 'Postgres'),
    withTimeout(redis.ping(), WARM_UP_TIMEOUT_MS, 'Redis'),
  ]);
}
