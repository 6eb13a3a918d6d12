import { strFromU8, strToU8, unzipSync, zipSync, type Zippable } from 'fflate';

/** What replaces a secret in a stored trace. */
export const REDACTED = '[redacted]';

/** Trace entries that are text and may carry request headers (network log, action log, HAR-like json). */
const TEXT_ENTRY = /\.(trace|network|json|har|txt|stacks)$/i;

/**
 * Removes a run's request headers from a Playwright trace before it is stored: every `{name, value}`
 * header whose name is one of `headerNames` gets its value replaced, and any remaining occurrence of
 * a secret value (in whatever JSON field it sits) is replaced too. Binary entries (screenshots,
 * response bodies) are copied unchanged. Returns the new zip.
 */
export function sanitizeTrace(zip: Uint8Array, headers: Record<string, string>): Buffer {
  const names = new Set(Object.keys(headers).map((n) => n.toLowerCase()));
  const secrets = secretForms(Object.values(headers));
  if (names.size === 0 && secrets.length === 0) return Buffer.from(zip);
  const entries = unzipSync(zip);
  const out: Zippable = {};
  for (const [name, body] of Object.entries(entries)) {
    if (!TEXT_ENTRY.test(name)) {
      out[name] = body;
      continue;
    }
    out[name] = strToU8(sanitizeText(strFromU8(body), names, secrets));
  }
  return Buffer.from(zipSync(out, { level: 6 }));
}

/** A value as it may appear in the trace: raw, and as the inside of a JSON string. */
function secretForms(values: string[]): string[] {
  const forms = new Set<string>();
  for (const v of values) {
    // Too short to search for without destroying unrelated text; their header entries are still redacted by name.
    if (v.length < 4) continue;
    forms.add(v);
    forms.add(JSON.stringify(v).slice(1, -1));
  }
  // Longest first, so a value containing another is replaced whole.
  return [...forms].sort((a, b) => b.length - a.length);
}

function sanitizeText(text: string, names: Set<string>, secrets: string[]): string {
  const lines = text.split('\n').map((line) => (line.trim().startsWith('{') ? sanitizeJsonLine(line, names) : line));
  let joined = lines.join('\n');
  for (const secret of secrets) joined = joined.split(secret).join(REDACTED);
  return joined;
}

function sanitizeJsonLine(line: string, names: Set<string>): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(line);
  } catch {
    return line;
  }
  return redactHeaderEntries(parsed, names) ? JSON.stringify(parsed) : line;
}

/** Walks a trace event and redacts header entries in place; true when anything changed. */
function redactHeaderEntries(value: unknown, names: Set<string>, depth = 0): boolean {
  if (depth > 40 || value === null || typeof value !== 'object') return false;
  let changed = false;
  if (Array.isArray(value)) {
    for (const item of value) changed = redactHeaderEntries(item, names, depth + 1) || changed;
    return changed;
  }
  const record = value as Record<string, unknown>;
  if (
    typeof record.name === 'string' &&
    typeof record.value === 'string' &&
    names.has(record.name.toLowerCase()) &&
    record.value !== REDACTED
  ) {
    record.value = REDACTED;
    changed = true;
  }
  for (const [key, child] of Object.entries(record)) {
    // A header map ({ "authorization": "..." }) rather than an array of entries.
    if (typeof child === 'string' && names.has(key.toLowerCase()) && child !== REDACTED && isHeaderMap(record)) {
      record[key] = REDACTED;
      changed = true;
    } else {
      changed = redactHeaderEntries(child, names, depth + 1) || changed;
    }
  }
  return changed;
}

/** A plain object whose values are all strings looks like a header map. */
function isHeaderMap(record: Record<string, unknown>): boolean {
  return Object.values(record).every((v) => typeof v === 'string');
}
