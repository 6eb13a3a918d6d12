import { HEADER_VALUE_RULE, isHeaderName, isHeaderValue, RETRY_LIMITS, WORKERS_LIMITS } from '@testrun/contracts';

/** A problem with the command line; the CLI prints it with usage and exits 2. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** A whole number from `min` to `max`; `flag` names the option in the error. */
function wholeNumberIn(value: string, flag: string, min: number, max: number): number {
  const n = /^\d+$/.test(value.trim()) ? Number(value.trim()) : Number.NaN;
  if (!(n >= min && n <= max))
    throw new UsageError(`${flag} must be a whole number from ${min} to ${max} (got "${value}")`);
  return n;
}

/** Parses a request's `retries`: a whole number from 0 to the cap. */
export function parseRetries(value: string, flag: string): number {
  return wholeNumberIn(value, flag, 0, RETRY_LIMITS.maxRetries);
}

/** Parses a request's `workers`: a whole number from 1 to the cap. */
export function parseWorkers(value: string, flag: string): number {
  return wholeNumberIn(value, flag, 1, WORKERS_LIMITS.maxWorkers);
}

const UNIT_MS: Record<string, number> = { ms: 1, s: 1_000, m: 60_000, h: 3_600_000 };

/**
 * Parses a duration: `15m`, `90s`, `1h`, `1m30s`, `250ms`, or a bare number of milliseconds.
 * `flag` names the option in the error message.
 */
export function parseDuration(value: string, flag: string): number {
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text);
  if (!/^(\d+(\.\d+)?(ms|s|m|h))+$/.test(text)) {
    throw new UsageError(
      `${flag} must be a duration such as 15m, 90s, 1h or a number of milliseconds (got "${value}")`,
    );
  }
  let total = 0;
  for (const [, amount = '', unit = ''] of text.matchAll(/(\d+(?:\.\d+)?)(ms|s|m|h)/g)) {
    total += Number(amount) * (UNIT_MS[unit] ?? Number.NaN);
  }
  return Math.round(total);
}

/**
 * Parses repeated `--header "Name: value"` flags into an object. Messages name the flag and the
 * position, never the value: header values are secrets (basic auth, bypass tokens).
 */
export function parseHeaders(values: readonly string[]): Record<string, string> {
  const headers: Record<string, string> = {};
  const seen = new Set<string>();
  values.forEach((raw, i) => {
    const where = `--header #${i + 1}`;
    const colon = raw.indexOf(':');
    if (colon <= 0) throw new UsageError(`${where} must look like "Name: value"`);
    const name = raw.slice(0, colon).trim();
    const value = raw.slice(colon + 1).trim();
    if (!isHeaderName(name)) throw new UsageError(`${where} has an invalid header name`);
    if (!isHeaderValue(value)) throw new UsageError(`${where} (${name}) must have a value with ${HEADER_VALUE_RULE}`);
    if (seen.has(name.toLowerCase())) throw new UsageError(`${where} repeats header ${name}`);
    seen.add(name.toLowerCase());
    headers[name] = value;
  });
  return headers;
}

/** Shorter strings are not redacted: they would blank out ordinary words of the output. */
const MIN_REDACTED_LENGTH = 6;

/**
 * The strings that must never be printed: every header value and, for `Scheme credentials`
 * values (basic auth, bearer tokens), the credentials on their own. The command never prints a
 * value itself; this guards what comes back from elsewhere (an error detail, a URL).
 */
export function secretsOf(values: Iterable<string>): string[] {
  const out = new Set<string>();
  for (const value of values) {
    if (value.length >= MIN_REDACTED_LENGTH) out.add(value);
    for (const part of value.split(/\s+/)) if (part.length >= MIN_REDACTED_LENGTH) out.add(part);
  }
  return [...out].sort((a, b) => b.length - a.length);
}

/** Replaces every secret in `text` with `***`. */
export function redact(text: string, secrets: readonly string[]): string {
  let out = text;
  for (const s of secrets) out = out.split(s).join('***');
  return out;
}
