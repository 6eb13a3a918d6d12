import { backoffDelay, parseAlternateLink, parseRateLimit, parseRetryAfter } from './backoff';

describe('backoff helpers', () => {
  it('grows exponentially with equal jitter and a ceiling', () => {
    expect(backoffDelay(0, { random: () => 0 })).toBe(250);
    expect(backoffDelay(0, { random: () => 0.999999 })).toBe(500);
    expect(backoffDelay(3, { random: () => 0 })).toBe(2000);
    expect(backoffDelay(20, { random: () => 1, maxMs: 30_000 })).toBe(30_000);
  });

  it('reads Retry-After as seconds or as an HTTP date', () => {
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(parseRetryAfter('12', now)).toBe(12_000);
    expect(parseRetryAfter('Thu, 01 Jan 2026 00:00:30 GMT', now)).toBe(30_000);
    expect(parseRetryAfter('soon', now)).toBeNull();
    expect(parseRetryAfter(null, now)).toBeNull();
  });

  it('reads RateLimit headers in both the combined and the separate form', () => {
    expect(parseRateLimit(new Headers({ RateLimit: 'limit=60, remaining=3, reset=20' }))).toEqual({
      limit: 60,
      remaining: 3,
      reset: 20,
    });
    expect(parseRateLimit(new Headers({ 'RateLimit-Remaining': '0', 'RateLimit-Limit': '5' }))).toEqual({
      limit: 5,
      remaining: 0,
      reset: null,
    });
    expect(parseRateLimit(new Headers())).toBeNull();
  });

  it('finds the alternate link', () => {
    expect(parseAlternateLink('<https://t.example/view/runs/run_1/tok>; rel="alternate"')).toBe(
      'https://t.example/view/runs/run_1/tok',
    );
    expect(parseAlternateLink('</a>; rel="next", </b>; rel=alternate')).toBe('/b');
    expect(parseAlternateLink(null)).toBeNull();
  });
});
