import type { RequestHandler, Response } from 'express';
import { hashApiKey } from '@testrun/core/api-keys';
import type { Db } from '@testrun/core/db';
import type { Logger } from '@testrun/core/logger';
import { ApiError, errorMessage } from '../errors';
import { limitedAddress } from '../client-address';
import { countAddressedRequest, readAuthEpoch, type ApiRedis, type FailedAuthLimit } from '../redis';
import { keyUseDue, readBearerKey, readKey, touchKey, type AuthContext } from '../services/auth';
import { KeyCache, type CachedKey } from '../services/key-cache';

/** Options of {@link authenticate}. */
export type AuthenticateOptions = {
  db: Db;
  redis: ApiRedis;
  logger: Logger;
  now: () => Date;
  /** Prefix of the Redis keys of the failed-authentication counters. */
  redisPrefix: string;
  /**
   * Failed authentications allowed per client address (an IPv6 one by its /64) per minute; past it
   * every request from the address is 429 until its window ends (default 30).
   */
  unauthenticatedPerMinute?: number;
  /**
   * The window of the per-key rate limit (RATE_LIMIT_WINDOW_MS): a known key's request is counted
   * against it in the round trip that reads the authentication epoch.
   */
  rateWindowMs: number;
  /** Accepted keys in memory (default a cache of this middleware's own). */
  cache?: KeyCache;
};

const WINDOW_MS = 60_000;

/** The caller of a route mounted behind {@link authenticate}; reaching this without it is a bug. */
export function authOf(res: Response): AuthContext {
  const { auth } = res.locals;
  if (!auth) throw new Error('this route is mounted without authentication: res.locals.auth is not set');
  return auth;
}

/**
 * Accepts a request only with a valid key (401/403 otherwise) and sets res.locals.auth. A key this
 * replica accepted shortly before is taken from memory, checked against the authentication epoch
 * that the request's rate-limit round trip reads too (res.locals.requestCount): a key whose standing
 * changed (revoked, paused, creator removed, plan changed) is read from Postgres again, so it is
 * refused on the next request on every replica, and no request costs more than one Redis round
 * trip once its key is known. Failed attempts are counted per client address in Redis (an IPv6
 * address by its /64, see limitedAddress); past the limit the address is refused with 429 until its
 * window ends, valid key or not: a guesser that hits a key cannot use it from there, and the check
 * rides on the round trip the request makes anyway.
 */
export function authenticate(options: AuthenticateOptions): RequestHandler {
  const { db, redis, logger, now, redisPrefix, rateWindowMs } = options;
  const { unauthenticatedPerMinute = 30, cache = new KeyCache() } = options;
  return async (req, res, next) => {
    const limit: FailedAuthLimit = {
      counter: `${redisPrefix}:rl-unauth:${limitedAddress(req.ip ?? 'unknown')}`,
      perMinute: unauthenticatedPerMinute,
      keyWindowMs: rateWindowMs,
    };
    try {
      const key = readBearerKey(req.get('Authorization'));
      res.locals.auth = await resolve(hashApiKey(key), res, limit);
      next();
    } catch (e) {
      if (e instanceof ApiError && e.code === 'unauthorized') await countFailure(redis, logger, limit);
      throw e;
    }
  };

  async function resolve(hash: string, res: Response, limit: FailedAuthLimit): Promise<AuthContext> {
    const cached = cache.get(hash, Date.now());
    // The epoch is read before the key: a change announced after this read is seen by the next request.
    let epoch: string | undefined;
    if (cached) {
      const counted = await countAddressedRequest(redis, redisPrefix, cached.auth.keyId, limit).catch(() => undefined);
      if (counted && 'lockedOutMs' in counted) throw lockedOut(counted.lockedOutMs, unauthenticatedPerMinute);
      if (counted) {
        res.locals.requestCount = counted;
        epoch = counted.authEpoch;
        if (epoch === cached.epoch) return used(cached);
      }
    } else {
      const read = await readAuthEpoch(redis, redisPrefix, limit).catch(() => undefined);
      if (read && 'lockedOutMs' in read) throw lockedOut(read.lockedOutMs, unauthenticatedPerMinute);
      epoch = read?.authEpoch;
    }
    // Without Redis nothing may be trusted from memory; the rate limit answers 503 after this check.
    let accepted: Awaited<ReturnType<typeof readKey>>;
    try {
      accepted = await readKey(db, hash);
    } catch (e) {
      cache.delete(hash);
      throw e;
    }
    const entry: CachedKey = {
      auth: accepted.auth,
      epoch: epoch ?? '',
      readAt: Date.now(),
      lastUsedAt: accepted.lastUsedAt?.getTime() ?? null,
    };
    if (epoch === undefined) cache.delete(hash);
    else cache.set(hash, entry);
    return used(entry);
  }

  function used(entry: CachedKey): AuthContext {
    const at = now();
    if (keyUseDue(entry.lastUsedAt, at)) {
      entry.lastUsedAt = at.getTime();
      touchKey(db, logger, entry.auth.keyId);
    }
    return entry.auth;
  }
}

/** The 429 of an address over the limit, for as long as its window has left. */
function lockedOut(ttlMs: number, perMinute: number): ApiError {
  return new ApiError(
    'rate_limited',
    `Too many requests with a missing or invalid API key from this address; at most ${perMinute} per minute.`,
    { headers: { 'Retry-After': String(Math.max(1, Math.ceil(ttlMs / 1000))) } },
  );
}

/** Counts a failed authentication against the address; past the limit, the 429 instead of the 401. */
async function countFailure(redis: ApiRedis, logger: Logger, { counter, perMinute }: FailedAuthLimit): Promise<void> {
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
  if (count > perMinute) throw lockedOut(ttl, perMinute);
}
