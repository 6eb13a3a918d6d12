import { createHash } from 'node:crypto';
import { authEpochKey } from '@testrun/core/api-keys';
import type { Logger } from '@testrun/core/logger';
import { createRedis } from '@testrun/core/queue';

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

/** What one request's Redis round trip tells: its number in the key's window and the auth epoch. */
export type RequestCount = { count: number; ttlMs: number; authEpoch: string };

/** A client address over the failed-authentication limit, and how long until its window ends. */
export type LockedOut = { lockedOutMs: number };

/**
 * The failed-authentication counter of a client address, and how many failures it may reach; and
 * the window of the per-key counter the same round trip counts the request in.
 */
export type FailedAuthLimit = { counter: string; perMinute: number; keyWindowMs: number };

/**
 * Counts a request against its key's window (starting the window on the first) and reads the
 * authentication epoch, atomically: one round trip per request for both. Given the failed-
 * authentication counter of the request's address (KEYS[3]), a request from an address over its
 * limit is not counted and answers {-1, the counter's time left, epoch}.
 */
const COUNT_SCRIPT = `
if #KEYS == 3 then
  local failed = tonumber(redis.call('GET', KEYS[3]) or '0')
  if failed > tonumber(ARGV[2]) then
    return {-1, redis.call('PTTL', KEYS[3]), redis.call('GET', KEYS[2]) or '0'}
  end
end
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

/** Runs {@link COUNT_SCRIPT} (by its hash; the text is sent only when Redis lacks it). */
async function runCountScript(redis: ApiRedis, keys: string[], args: number[]): Promise<[number, number, string]> {
  try {
    return (await redis.evalsha(COUNT_SHA, keys.length, ...keys, ...args)) as [number, number, string];
  } catch (e) {
    if (!(e instanceof Error && e.message.startsWith('NOSCRIPT'))) throw e;
    return (await redis.eval(COUNT_SCRIPT, keys.length, ...keys, ...args)) as [number, number, string];
  }
}

/** Counts a request of `keyId` in its window of `windowMs` (see {@link COUNT_SCRIPT}). */
export async function countRequest(
  redis: ApiRedis,
  redisPrefix: string,
  keyId: string,
  windowMs: number,
): Promise<RequestCount> {
  const keys = [rateCounterKey(redisPrefix, keyId), authEpochKey(redisPrefix)];
  const [count, ttlMs, authEpoch] = await runCountScript(redis, keys, [windowMs]);
  return { count, ttlMs, authEpoch };
}

/** Counts a request of `keyId` unless its address is over the failed-authentication limit. */
export async function countAddressedRequest(
  redis: ApiRedis,
  redisPrefix: string,
  keyId: string,
  limit: FailedAuthLimit,
): Promise<RequestCount | LockedOut> {
  const keys = [rateCounterKey(redisPrefix, keyId), authEpochKey(redisPrefix), limit.counter];
  const [count, ttlMs, authEpoch] = await runCountScript(redis, keys, [limit.keyWindowMs, limit.perMinute]);
  return count < 0 ? { lockedOutMs: ttlMs } : { count, ttlMs, authEpoch };
}

/**
 * The authentication epoch, for a key this replica has not read yet, and in the same round trip
 * whether the request's address is over the failed-authentication limit (then that, and no epoch).
 */
export async function readAuthEpoch(
  redis: ApiRedis,
  redisPrefix: string,
  limit: FailedAuthLimit,
): Promise<{ authEpoch: string } | LockedOut> {
  const results = await redis.multi().get(authEpochKey(redisPrefix)).get(limit.counter).pttl(limit.counter).exec();
  const [epoch, failed, ttl] = (results ?? []).map(([error, value]) => {
    if (error) throw error;
    return value;
  });
  if (Number(failed ?? 0) > limit.perMinute) return { lockedOutMs: Number(ttl) };
  return { authEpoch: typeof epoch === 'string' ? epoch : '0' };
}
