import { createHash } from 'node:crypto';
import { authEpochKey, createRedis, type Logger } from '@testrun/core';

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

/** The fixed window of the per-key rate limit. */
export const RATE_WINDOW_MS = 60_000;

/** What one request's Redis round trip tells: its number in the key's window and the auth epoch. */
export type RequestCount = { count: number; ttlMs: number; authEpoch: string };

/**
 * Counts a request against its key's window (starting the window on the first) and reads the
 * authentication epoch, atomically: one round trip per request for both.
 */
const COUNT_SCRIPT = `
local count = redis.call('INCR', KEYS[1])
local ttl = redis.call('PTTL', KEYS[1])
if ttl <= 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[1])
  ttl = tonumber(ARGV[1])
end
return {count, ttl, redis.call('GET', KEYS[2]) or '0'}`;
const COUNT_SHA = createHash('sha1').update(COUNT_SCRIPT).digest('hex');

/** The counter of a key's current window; every replica with the same prefix shares it. */
function rateCounterKey(redisPrefix: string, keyId: string): string {
  return `${redisPrefix}:rl:${keyId}`;
}

/** Runs {@link COUNT_SCRIPT} for `keyId` (by its hash; the text is sent only when Redis lacks it). */
export async function countRequest(redis: ApiRedis, redisPrefix: string, keyId: string): Promise<RequestCount> {
  const args = [rateCounterKey(redisPrefix, keyId), authEpochKey(redisPrefix), RATE_WINDOW_MS] as const;
  let reply: unknown;
  try {
    reply = await redis.evalsha(COUNT_SHA, 2, ...args);
  } catch (e) {
    if (!(e instanceof Error && e.message.startsWith('NOSCRIPT'))) throw e;
    reply = await redis.eval(COUNT_SCRIPT, 2, ...args);
  }
  const [count, ttlMs, authEpoch] = reply as [number, number, string];
  return { count, ttlMs, authEpoch };
}

/** The authentication epoch alone, for a key this replica has not read yet. */
export async function readAuthEpoch(redis: ApiRedis, redisPrefix: string): Promise<string> {
  return (await redis.get(authEpochKey(redisPrefix))) ?? '0';
}
