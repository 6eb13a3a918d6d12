import { createHash, randomBytes } from 'node:crypto';

/**
 * API keys look like `trk_` + 32 random base62 characters + 6 base62 characters of checksum. The
 * checksum lets a mistyped or truncated key be refused without a database lookup.
 */
const PREFIX = 'trk_';
const BASE62 = '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
const BODY_LENGTH = 32;
const CHECK_LENGTH = 6;
const KEY_PATTERN = new RegExp(`^${PREFIX}[0-9A-Za-z]{${BODY_LENGTH + CHECK_LENGTH}}$`);

function checksum(body: string): string {
  const digest = createHash('sha256').update(body).digest();
  let out = '';
  for (const byte of digest.subarray(0, CHECK_LENGTH)) out += BASE62.charAt(byte % 62);
  return out;
}

export function generateApiKey(): { key: string; hash: string; prefix: string } {
  let body = '';
  while (body.length < BODY_LENGTH) {
    for (const b of randomBytes(BODY_LENGTH * 2)) {
      // 248 = 4 * 62: rejection sampling keeps every character equally likely.
      if (b < 248 && body.length < BODY_LENGTH) body += BASE62.charAt(b % 62);
    }
  }
  const key = `${PREFIX}${body}${checksum(body)}`;
  return { key, hash: hashApiKey(key), prefix: displayPrefix(key) };
}

/** True when the key has the right shape and checksum; says nothing of whether it exists. */
export function isWellFormedApiKey(key: string): boolean {
  if (!KEY_PATTERN.test(key)) return false;
  const body = key.slice(PREFIX.length, PREFIX.length + BODY_LENGTH);
  return key.slice(PREFIX.length + BODY_LENGTH) === checksum(body);
}

export function hashApiKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

export function displayPrefix(key: string): string {
  return key.slice(0, PREFIX.length + 6);
}

/**
 * The Redis key (under the deployment's prefix) of the authentication epoch. Every API replica keeps
 * accepted keys in memory for a few seconds, tagged with the epoch they were read at, and reads the
 * epoch on every request in the same round trip as the rate limit: a change of the epoch makes each
 * replica read its keys from Postgres again.
 */
export function authEpochKey(redisPrefix: string): string {
  return `${redisPrefix}:auth-epoch`;
}

/**
 * How long an API replica trusts a key it read from Postgres without being told of a change: the
 * bound on a change made around the announcement (plain SQL, or Redis unreachable at the time).
 */
export const KEY_CACHE_TTL_MS = 10_000;

/** Tells every API replica that a key's standing may have changed; called after the change commits. */
export type AuthChangeAnnouncer = () => Promise<void>;

/**
 * The announcer of a deployment: bumps its authentication epoch, so a revoked or paused key is
 * refused on the very next request on every replica.
 */
export function authChangeAnnouncer(redis: { incr: (key: string) => Promise<number> }, redisPrefix: string) {
  const announce: AuthChangeAnnouncer = async () => {
    await redis.incr(authEpochKey(redisPrefix));
  };
  return announce;
}
