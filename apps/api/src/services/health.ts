import type { Db } from '@testrun/core';
import type { ApiRedis } from '../redis';

const CHECK_TIMEOUT_MS = 2_000;

function withTimeout<T>(promise: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => reject(new Error(`${what} did not answer within ${CHECK_TIMEOUT_MS} ms`)),
      CHECK_TIMEOUT_MS,
    );
  });
  return Promise.race([promise, timeout]).finally(() => clearTimeout(timer));
}

/** Asks Postgres and Redis to answer; each is reported as ok or the reason it is not. */
export async function checkReadiness(db: Db, redis: ApiRedis): Promise<{ postgres: string; redis: string }> {
  const [pg, rd] = await Promise.allSettled([
    withTimeout(db.$queryRaw`SELECT 1`, 'Postgres'),
    withTimeout(redis.ping(), 'Redis'),
  ]);
  return {
    postgres: pg.status === 'fulfilled' ? 'ok' : 'unreachable',
    redis: rd.status === 'fulfilled' ? 'ok' : 'unreachable',
  };
}
