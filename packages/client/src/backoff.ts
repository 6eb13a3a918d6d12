/** Options of the exponential backoff used when the server gives no `Retry-After`. */
export interface BackoffOptions {
  /** First delay before jitter, in ms. Default 500. */
  baseMs?: number;
  /** Ceiling of any delay before jitter, in ms. Default 30 000. */
  maxMs?: number;
  /** Source of randomness in [0, 1). Default `Math.random`. */
  random?: () => number;
}

/**
 * Delay before retry number `attempt` (0-based): "equal jitter" — half of the exponential step is
 * fixed, half random — so clients that failed together do not retry together, yet never retry at
 * once.
 */
export function backoffDelay(attempt: number, options: BackoffOptions = {}): number {
  const base = options.baseMs ?? 500;
  const max = options.maxMs ?? 30_000;
  const random = options.random ?? Math.random;
  const step = Math.min(max, base * 2 ** Math.max(0, attempt));
  return Math.round(step / 2 + random() * (step / 2));
}

/**
 * Milliseconds a `Retry-After` value asks for: delta-seconds or an HTTP date (RFC 9110 §10.2.3).
 * Null when absent or unreadable, so the caller falls back to backoff.
 */
export function parseRetryAfter(value: string | null | undefined, nowMs: number): number | null {
  if (value == null) return null;
  const trimmed = value.trim();
  if (trimmed === '') return null;
  if (/^\d+$/.test(trimmed)) return Number(trimmed) * 1000;
  const date = Date.parse(trimmed);
  if (Number.isNaN(date)) return null;
  return Math.max(0, date - nowMs);
}

/** The parts of an IETF `RateLimit` header (`limit=60, remaining=0, reset=42`), when present. */
export interface RateLimitInfo {
  limit: number | null;
  remaining: number | null;
  /** Seconds until the window resets. */
  reset: number | null;
}

/**
 * Reads the combined `RateLimit` header of draft-ietf-httpapi-ratelimit-headers (draft 7), or the
 * older separate `RateLimit-Limit` / `-Remaining` / `-Reset` headers.
 */
export function parseRateLimit(headers: Headers): RateLimitInfo | null {
  const combined = headers.get('ratelimit');
  const info: RateLimitInfo = { limit: null, remaining: null, reset: null };
  if (combined) {
    for (const part of combined.split(/[,;]/)) {
      const m = /^\s*(limit|remaining|reset)\s*=\s*(\d+)\s*$/i.exec(part);
      const field = m?.[1]?.toLowerCase();
      if (field === 'limit' || field === 'remaining' || field === 'reset') info[field] = Number(m?.[2]);
    }
  }
  for (const field of ['limit', 'remaining', 'reset'] as const) {
    const v = headers.get(`ratelimit-${field}`);
    if (info[field] === null && v !== null && /^\d+$/.test(v.trim())) info[field] = Number(v.trim());
  }
  return info.limit === null && info.remaining === null && info.reset === null ? null : info;
}

/** The target of a `Link: <url>; rel="alternate"` header, or null. */
export function parseAlternateLink(value: string | null): string | null {
  if (!value) return null;
  for (const part of value.split(/,(?=\s*<)/)) {
    const [, target, params = ''] = /^\s*<([^>]*)>\s*(.*)$/.exec(part) ?? [];
    if (target !== undefined && /(^|;)\s*rel\s*=\s*"?([^";]*\s)?alternate(\s[^";]*)?"?\s*(;|$)/i.test(params))
      return target;
  }
  return null;
}
