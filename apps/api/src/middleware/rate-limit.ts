import type { RequestHandler } from 'express';
import { rateLimit } from 'express-rate-limit';
import { RedisStore } from 'rate-limit-redis';
import type { Logger } from '@testrun/core';
import { ApiError, errorMessage } from '../errors';
import type { ApiRedis } from '../redis';
import { authOf } from './authenticate';

/**
 * rate-limit-redis loads its Lua script once at start; if Redis was down then, the failed load is
 * cached for ever. Reloading it after any failure lets the limiter recover when Redis does.
 */
class RecoveringRedisStore extends RedisStore {
  override async increment(key: string) {
    try {
      return await super.increment(key);
    } catch (e) {
      const reload = this.loadIncrementScript(this.prefixKey(key));
      reload.catch(() => undefined);
      this.incrementScriptSha = reload;
      throw e;
    }
  }
}

/** Options of {@link rateLimitPerKey}. */
export type RateLimitOptions = {
  redis: ApiRedis;
  logger: Logger;
  /** Requests per minute per key (RATE_LIMIT_PER_MINUTE, default 60). */
  perMinute: number;
  /** Prefix of the counters; every replica with the same prefix shares them. */
  redisPrefix: string;
};

/**
 * Limits each API key to `perMinute` requests per fixed one-minute window, counted in Redis so all
 * replicas share one counter. Sends RateLimit and RateLimit-Policy headers (IETF draft 7) and, past
 * the limit, a 429 problem with Retry-After. When Redis cannot be reached the request gets a 503:
 * the limit is part of the contract and is not silently dropped.
 */
export function rateLimitPerKey({ redis, logger, perMinute, redisPrefix }: RateLimitOptions): RequestHandler {
  return rateLimit({
    windowMs: 60_000,
    limit: perMinute,
    standardHeaders: 'draft-7',
    legacyHeaders: false,
    keyGenerator: (_req, res) => authOf(res).keyId,
    store: new RecoveringRedisStore({
      prefix: `${redisPrefix}:rl:`,
      sendCommand: (command: string, ...args: string[]) => redis.call(command, ...args) as never,
    }),
    passOnStoreError: false,
    logger: {
      error: (e: unknown, message?: string) => logger.warn(message ?? 'rate limiter error', { error: errorMessage(e) }),
      warn: (e: unknown, message?: string) =>
        logger.warn(message ?? 'rate limiter warning', { error: errorMessage(e) }),
    },
    handler: (req, _res, next) => {
      const info = (req as typeof req & { rateLimit?: { resetTime?: Date } }).rateLimit;
      const retryAfter = info?.resetTime ? Math.max(1, Math.ceil((info.resetTime.getTime() - Date.now()) / 1000)) : 60;
      next(
        new ApiError(
          'rate_limited',
          `This API key is limited to ${perMinute} requests per minute; retry after ${retryAfter} s.`,
          {
            headers: { 'Retry-After': String(retryAfter) },
          },
        ),
      );
    },
  });
}
