import type { RequestHandler } from 'express';
import { ApiError } from '../errors';
import { countRequest, type ApiRedis } from '../redis';
import { authOf } from './authenticate';

/** Options of {@link rateLimitPerKey}. */
export type RateLimitOptions = {
  redis: ApiRedis;
  /** Requests per window per key (RATE_LIMIT_PER_MINUTE, default 60). */
  perMinute: number;
  /** The fixed window the requests are counted in (RATE_LIMIT_WINDOW_MS, default 60000: a minute). */
  windowMs: number;
  /** Prefix of the counters; every replica with the same prefix shares them. */
  redisPrefix: string;
};

/**
 * Limits each API key to `perMinute` requests per fixed window (a minute unless configured), counted in Redis so all
 * replicas share one counter (authentication has usually counted the request already, in its own
 * round trip). Sends RateLimit and RateLimit-Policy headers (IETF draft 7) and, past the limit, a
 * 429 problem with Retry-After. When Redis cannot be reached the request gets a 503: the limit is
 * part of the contract and is not silently dropped.
 */
export function rateLimitPerKey({ redis, perMinute, windowMs, redisPrefix }: RateLimitOptions): RequestHandler {
  const policy = `${perMinute};w=${Math.ceil(windowMs / 1000)}`;
  const per = windowMs === 60_000 ? 'minute' : `${windowMs / 1000} s`;
  return async (_req, res, next) => {
    const counted = res.locals.requestCount ?? (await countRequest(redis, redisPrefix, authOf(res).keyId, windowMs));
    const resetSeconds = Math.max(0, Math.ceil(counted.ttlMs / 1000));
    res.setHeader('RateLimit-Policy', policy);
    res.setHeader(
      'RateLimit',
      `limit=${perMinute}, remaining=${Math.max(perMinute - counted.count, 0)}, reset=${resetSeconds}`,
    );
    if (counted.count > perMinute) {
      const retryAfter = Math.max(1, resetSeconds);
      throw new ApiError(
        'rate_limited',
        `This API key is limited to ${perMinute} requests per ${per}; retry after ${retryAfter} s.`,
        { headers: { 'Retry-After': String(retryAfter) } },
      );
    }
    next();
  };
}
