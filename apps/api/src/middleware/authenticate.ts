import type { RequestHandler, Response } from 'express';
import type { Db, Logger } from '@testrun/core';
import { ApiError, errorMessage } from '../errors';
import type { ApiRedis } from '../redis';
import { authenticateKey, readBearerKey, type AuthContext } from '../services/auth';

/** Options of {@link authenticate}. */
export type AuthenticateOptions = {
  db: Db;
  redis: ApiRedis;
  logger: Logger;
  now: () => Date;
  /** Prefix of the Redis keys of the failed-authentication counters. */
  redisPrefix: string;
  /** Failed authentications allowed per client address per minute before 429 (default 30). */
  unauthenticatedPerMinute?: number;
};

const WINDOW_MS = 60_000;

/** The caller of a route mounted behind {@link authenticate}; reaching this without it is a bug. */
export function authOf(res: Response): AuthContext {
  const { auth } = res.locals;
  if (!auth) throw new Error('this route is mounted without authentication: res.locals.auth is not set');
  return auth;
}

/**
 * Accepts a request only with a valid key (401/403 otherwise) and sets res.locals.auth. Failed
 * attempts are counted per client address in Redis; past the limit the answer is 429 instead of
 * 401, which slows down key guessing without touching requests that carry a valid key.
 */
export function authenticate(options: AuthenticateOptions): RequestHandler {
  const { db, redis, logger, now, redisPrefix, unauthenticatedPerMinute = 30 } = options;
  return async (req, res, next) => {
    try {
      const key = readBearerKey(req.get('Authorization'));
      res.locals.auth = await authenticateKey(db, logger, key, now());
      next();
    } catch (e) {
      if (e instanceof ApiError && e.code === 'unauthorized') await countFailure(req.ip ?? 'unknown');
      throw e;
    }
  };

  async function countFailure(address: string): Promise<void> {
    const counter = `${redisPrefix}:rl-unauth:${address}`;
    let count: number;
    let ttl: number;
    try {
      const results = await redis.multi().incr(counter).pexpire(counter, WINDOW_MS, 'NX').pttl(counter).exec();
      count = Number(results?.[0]?.[1] ?? 0);
      ttl = Number(results?.[2]?.[1] ?? WINDOW_MS);
    } catch (error) {
      // Without Redis the caller still gets its 401; only the guessing brake is off.
      logger.warn('could not count a failed authentication', { error: errorMessage(error) });
      return;
    }
    if (count > unauthenticatedPerMinute) {
      throw new ApiError(
        'rate_limited',
        `Too many requests with a missing or invalid API key from this address; at most ${unauthenticatedPerMinute} per minute.`,
        {
          headers: { 'Retry-After': String(Math.max(1, Math.ceil(ttl / 1000))) },
        },
      );
    }
  }
}
