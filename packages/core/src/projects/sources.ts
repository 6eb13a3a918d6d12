import { createHash } from 'node:crypto';
import { BUNDLE_LIMITS, type DiscoveredTest } from '@testrun/contracts';
import type { ArtifactStore } from '../artifact-store';
import { openBundle } from '../bundles/store';
import { walkBundle } from '../bundles/walk';

// A Playwright test's own source, as a digest: what tells a deployment that the test changed when
// its file changed elsewhere (a sibling test, a line added above it). The test's source is its call
// (`test(…)`, `test.skip(…)`), from where discovery locates it to its closing parenthesis, never
// past the next test of its file; the text is read from the bundle, never run.

/** Spec files larger than this are not read: their tests get no digest (any change then counts). */
const MAX_SOURCE_BYTES = 2 * 1024 * 1024;

/** The text of the bundle's files named in `wanted` (those it has, within MAX_SOURCE_BYTES). */
export async function readBundleTexts(
  store: ArtifactStore,
  workspaceId: string,
  digest: string,
  wanted: ReadonlySet<string>,
): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  const opened = await openBundle(store, workspaceId, digest);
  if (!opened) return out;
  const caps = { maxUnpackedBytes: BUNDLE_LIMITS.maxUnpackedBytes, maxFiles: BUNDLE_LIMITS.maxFiles };
  await walkBundle(opened.stream, caps, async (entry, content) => {
    if (entry.folder || !wanted.has(entry.path) || entry.size > MAX_SOURCE_BYTES) return;
    const chunks: Buffer[] = [];
    for await (const chunk of content) chunks.push(Buffer.from(chunk));
    out.set(entry.path, Buffer.concat(chunks).toString('utf8'));
  });
  return out;
}

/** Each test's source digest (`sha256:` and 16 hex), keyed by the test object; none when its file was not read. */
export function sourceDigests(
  tests: readonly DiscoveredTest[],
  texts: ReadonlyMap<string, string>,
): Map<DiscoveredTest, string> {
  const out = new Map<DiscoveredTest, string>();
  const starts = new Map<string, number[]>();
  for (const file of texts.keys()) starts.set(file, []);
  for (const test of tests) {
    const text = texts.get(test.file);
    if (text === undefined) continue;
    starts.get(test.file)?.push(offsetOf(text, test.line, test.column));
  }
  for (const list of starts.values()) list.sort((a, b) => a - b);
  for (const test of tests) {
    const text = texts.get(test.file);
    if (text === undefined) continue;
    const start = offsetOf(text, test.line, test.column);
    const next = starts.get(test.file)?.find((s) => s > start) ?? text.length;
    const span = text.slice(start, callEnd(text, start, next));
    out.set(test, `sha256:${createHash('sha256').update(span.trimEnd()).digest('hex').slice(0, 16)}`);
  }
  return out;
}

/** The offset of a 1-based line and column (Playwright's) in `text`. */
function offsetOf(text: string, line: number, column: number): number {
  let offset = 0;
  for (let l = 1; l < line; l++) {
    const nl = text.indexOf('\n', offset);
    if (nl < 0) return text.length;
    offset = nl + 1;
  }
  return Math.min(text.length, offset + Math.max(0, column - 1));
}

/**
 * Where the call starting at `start` ends: just past the parenthesis that closes its first one,
 * skipping strings, template literals and comments; `limit` when it does not close before it.
 */
function callEnd(text: string, start: number, limit: number): number {
  let depth = 0;
  for (let i = start; i < limit; i++) {
    const c = text[i];
    if (c === '/' && (text[i + 1] === '/' || text[i + 1] === '*')) {
      const close = text[i + 1] === '/' ? '\n' : '*/';
      const end = text.indexOf(close, i + 2);
      if (end < 0) return limit;
      i = end + close.length - 1;
    } else if (c === '"' || c === "'" || c === '`') {
      i = stringEnd(text, i, limit);
    } else if (c === '(') depth++;
    else if (c === ')' && --depth === 0) return i + 1;
  }
  return limit;
}

/** The index of the quote that closes the string opened at `open` (backslash escapes skipped). */
function stringEnd(text: string, open: number, limit: number): number {
  const quote = text[open];
  for (let i = open + 1; i < limit; i++) {
    if (text[i] === '\\') i++;
    else if (text[i] === quote) return i;
  }
  return limit;
}
