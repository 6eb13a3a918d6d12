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
