import { strFromU8, strToU8, unzipSync, zipSync, type Zippable } from 'fflate';
import { MASK, type SecretMask } from './secret-mask';

/** What replaces a secret in a stored trace: the same mask as everywhere else. */
export const REDACTED = MASK;

/** Trace entries that are text and may carry request headers (network log, action log, HAR-like json). */
const TEXT_ENTRY = /\.(trace|network|json|har|txt|stacks)$/i;
/** Stored resources that are never text: copied as they are. */
const BINARY_ENTRY = /\.(png|jpe?g|gif|webp|avif|ico|woff2?|ttf|otf|mp4|webm|zip|gz|br|wasm|pdf)$/i;

/**
 * Removes a run's secrets from a Playwright trace before it is stored: every `{name, value}` header
 * whose name is one of `headerNames` gets its value replaced; every string of the trace's events
 * (action parameters such as a fill's value, console messages, snapshot text, network headers) and
 * every stored resource that is text (response and request bodies, pages, scripts) has the secret
 * values masked as `mask` does. The values of password inputs in the trace's DOM snapshots are
 * secrets too, wherever else they occur (the fill that typed one, a form post that sent it), even
 * when the run did not know them as such. Images are copied unchanged (a page that paints a secret
 * shows it in its screenshots; a password field paints dots). Returns the new zip, or the same
 * bytes when there was nothing to mask.
 */
export function sanitizeTrace(zip: Uint8Array, headerNames: readonly string[], given: SecretMask): Buffer {
  const names = new Set(headerNames.map((n) => n.toLowerCase()));
  const entries = unzipSync(zip);
  const mask = given.with(...passwordValues(entries));
  if (names.size === 0 && mask.isEmpty) return Buffer.from(zip);
  const out: Zippable = {};
  for (const [name, body] of Object.entries(entries)) {
    if (TEXT_ENTRY.test(name)) {
      out[name] = strToU8(sanitizeText(strFromU8(body), names, mask));
      continue;
    }
    const text = BINARY_ENTRY.test(name) ? null : asText(body);
    // Images are compressed already: stored as they are, not deflated again (most of a trace's bytes).
    out[name] = text === null ? [body, { level: 0 }] : strToU8(mask.text(text));
  }
  return Buffer.from(zipSync(out, { level: 6 }));
}

/** The entry as text when it is UTF-8 without NUL bytes, else null (binary). */
function asText(body: Uint8Array): string | null {
  if (body.includes(0)) return null;
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(body);
  } catch {
    return null;
  }
}

function sanitizeText(text: string, names: Set<string>, mask: SecretMask): string {
  const lines = text
    .split('\n')
    .map((line) => (line.trim().startsWith('{') ? sanitizeJsonLine(line, names, mask) : mask.text(line)));
  // Values spelled some other way inside JSON text (escaped in a string within a string).
  return mask.longValues(lines.join('\n'));
}

function sanitizeJsonLine(line: string, names: Set<string>, mask: SecretMask): string {
  let parsed: unknown;
  try {
    parsed = JSON.parse(line);
  } catch {
    return mask.longValues(line);
  }
  const redacted = redactHeaderEntries(parsed, names);
  if (mask.isEmpty) return redacted ? JSON.stringify(parsed) : line;
  // Every string of the event, short values included: masking strings (not the JSON text) keeps the syntax intact.
  return JSON.stringify(maskStrings(parsed, mask));
}

function maskStrings(value: unknown, mask: SecretMask, depth = 0): unknown {
  if (typeof value === 'string') return mask.text(value);
  if (depth > 60 || value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return value.map((item: unknown) => maskStrings(item, mask, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [key, child] of Object.entries(value)) out[key] = maskStrings(child, mask, depth + 1);
  return out;
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

/** The values of every password input in the DOM snapshots of the trace's event logs. */
function passwordValues(entries: Record<string, Uint8Array>): string[] {
  const found = new Set<string>();
  for (const [name, body] of Object.entries(entries)) {
    if (!/\.trace$/i.test(name)) continue;
    for (const line of strFromU8(body).split('\n')) {
      if (!line.includes('"frame-snapshot"')) continue;
      try {
        const event = JSON.parse(line) as { type?: unknown; snapshot?: { html?: unknown } };
        if (event.type === 'frame-snapshot') collectPasswords(event.snapshot?.html, found);
      } catch {
        // Not an event: masked as text like the rest of the entry.
      }
    }
  }
  return [...found];
}

/**
 * Walks a snapshot's node tree (`[tag, attributes, ...children]`, text nodes as strings, nodes of
 * an earlier snapshot as `[[snapshot, node]]`) and collects the `value`s of password inputs:
 * Playwright keeps an input's current value in `__playwright_value_`.
 */
function collectPasswords(node: unknown, found: Set<string>, depth = 0): void {
  if (depth > 500 || !Array.isArray(node)) return;
  const [tag, attributes] = node as unknown[];
  if (typeof tag === 'string' && tag.toUpperCase() === 'INPUT' && isRecord(attributes)) {
    const type = Object.entries(attributes).find(([key]) => key.toLowerCase() === 'type')?.[1];
    if (typeof type === 'string' && type.trim().toLowerCase() === 'password')
      for (const key of ['__playwright_value_', 'value']) {
        const value = attributes[key];
        if (typeof value === 'string' && value.length > 0 && value !== REDACTED) found.add(value);
      }
  }
  for (const child of node) collectPasswords(child, found, depth + 1);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
