import { createRedis, type Logger } from '@testrun/core';

export type ApiRedis = ReturnType<typeof createRedis>;

/**
 * The API's Redis connection (rate-limit counters and the run queue's producer). Unlike a worker's,
 * a command fails after one reconnect attempt instead of waiting for Redis forever, so a request
 * gets a prompt 503 when Redis is down.
 */
export function createApiRedis(url: string, logger: Logger): ApiRedis {
  const redis = createRedis(url, {
    maxRetriesPerRequest: 1,
    connectTimeout: 2_000,
    retryStrategy: (times) => Math.min(times * 200, 2_000),
  });
  let lastReport = 0;
  redis.on('error', (e: Error) => {
    // ioredis repeats the same error on every reconnect attempt: one line every 10 s is enough.
    if (Date.now() - lastReport > 10_000) {
      lastReport = Date.now();
      logger.warn('redis error', { error: e.message });
    }
  });
  return redis;
}
