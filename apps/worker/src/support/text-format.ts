/** Shortens text quoted in messages so one huge `body` text cannot swamp a summary. */
export function truncate(text: string, max = 120): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}

/** Quotes a value for a message, shortened. */
export function quote(text: string, max = 120): string {
  return `"${truncate(text, max)}"`;
}

/**
 * A URL as it may appear in messages and summaries: user:password (basic auth written into a
 * base URL) never leaves the worker.
 */
export function displayUrl(url: string): string {
  try {
    const parsed = new URL(url);
    if (!parsed.username && !parsed.password) return url;
    parsed.username = '';
    parsed.password = '';
    return parsed.href;
  } catch {
    return url;
  }
}

/** `/shop/i`: how a pattern step is shown. */
export function formatPattern(pattern: string, flags?: string): string {
  return `/${truncate(pattern, 80)}/${flags ?? ''}`;
}

/** Whitespace collapsed the way a reader sees the text; used on both sides of a text comparison. */
export function normalizeWhitespace(text: string): string {
  return text.replace(/\s+/g, ' ').trim();
}
